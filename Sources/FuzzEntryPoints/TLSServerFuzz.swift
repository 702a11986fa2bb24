import DTLS
import TLS

extension FuzzEntryPoints {
    /// The HTTPS/WSS listener's TLS server: the bytes are what a client
    /// sends first (a ClientHello and what follows). Fed whole and split in
    /// two, the stream must end in the same place (established, waiting,
    /// or failed with a typed error), return no plaintext before the
    /// handshake ends, and be closed after any error. OpenSSL parses; this
    /// checks that our wrapper never traps and stays bounded.
    public static func tlsServer(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let whole = tlsServerOutcome(bytes, split: nil)
        if let first = bytes.first, bytes.count > 1 {
            let split = tlsServerOutcome(bytes, split: Int(first) % bytes.count)
            precondition(split == whole, "split feeding differs: \(split) vs \(whole)")
        }
    }

    private enum TLSServerOutcome: Equatable {
        case handshaking, established, failed
    }

    private static func tlsServerOutcome(_ bytes: [UInt8], split: Int?) -> TLSServerOutcome {
        guard let context = fuzzTLSContext, var server = try? TLSStream(server: context) else {
            preconditionFailure("the fuzz TLS context could not be made")
        }
        let parts = split.map { [Array(bytes[..<$0]), Array(bytes[$0...])] } ?? [bytes]
        for part in parts {
            do {
                let plaintext = try server.receive(part)
                precondition(plaintext.isEmpty || server.phase != .handshaking, "plaintext before the handshake ended")
            } catch {
                precondition(server.phase == .closed, "a failed stream is not closed")
                return .failed
            }
        }
        _ = server.takeOutput()
        return server.phase == .established ? .established : .handshaking
    }
}

/// One server context for every input: a certificate made once (at a fixed
/// instant, so no clock is read).
private let fuzzTLSContext: TLSContext? = {
    guard let certificate = try? DTLSCertificate.generate(issuedAt: 1_700_000_000, subjectAltNames: "DNS:localhost")
    else { return nil }
    return try? TLSContext.server(certificateChainPEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
}()
