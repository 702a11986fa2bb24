import DTLS
import Foundation
import TLS
import Testing

/// A server certificate for localhost, made the way `swiftlet serve --dev
/// --tls` makes it, and a client and server stream talking in memory.
struct TLSPair: ~Copyable {
    var client: TLSStream
    var server: TLSStream

    /// Moves every queued byte across until neither side has more; returns
    /// the plaintext each side received.
    mutating func pump() throws(TLSError) -> (atClient: [UInt8], atServer: [UInt8]) {
        var atClient: [UInt8] = [], atServer: [UInt8] = []
        for _ in 0..<32 {
            let toServer = client.takeOutput()
            let toClient = server.takeOutput()
            if toServer.isEmpty, toClient.isEmpty { break }
            if !toServer.isEmpty { atServer += try server.receive(toServer) }
            if !toClient.isEmpty { atClient += try client.receive(toClient) }
        }
        return (atClient, atServer)
    }
}

enum TLSFixture {
    /// Issued now: OpenSSL checks the validity window against the real clock.
    static let certificate = try! DTLSCertificate.generate(
        issuedAt: Int64(Date().timeIntervalSince1970), subjectAltNames: "DNS:localhost,IP:127.0.0.1,IP:::1")

    static func serverContext() throws -> TLSContext {
        try TLSContext.server(certificateChainPEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
    }

    static func trustingClient() throws -> TLSContext {
        try TLSContext.client(trust: .certificates(pem: certificate.certificatePEM))
    }
}

@Suite struct TLSStreamTests {
    @Test func clientAndServerExchangeDataOverTLS13WithALPN() throws {
        var pair = TLSPair(
            client: try TLSStream(client: try TLSFixture.trustingClient(), serverName: "localhost"),
            server: try TLSStream(server: try TLSFixture.serverContext()))
        try pair.client.send(Array("GET / HTTP/1.1\r\n\r\n".utf8))  // before the handshake: waits
        let first = try pair.pump()
        #expect(pair.client.phase == .established)
        #expect(pair.server.phase == .established)
        #expect(first.atServer == Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(pair.client.protocolVersion == "TLSv1.3")
        #expect(pair.client.negotiatedProtocol == "http/1.1")
        #expect(pair.server.negotiatedProtocol == "http/1.1")

        let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try pair.server.send(big)
        #expect(try pair.pump().atClient == big)
    }

    @Test func ipAddressIsVerifiedAgainstTheIPSubjectAltName() throws {
        var pair = TLSPair(
            client: try TLSStream(client: try TLSFixture.trustingClient(), serverName: "127.0.0.1"),
            server: try TLSStream(server: try TLSFixture.serverContext()))
        _ = try pair.pump()
        #expect(pair.client.phase == .established)
    }

    @Test func wrongHostNameFailsVerification() throws {
        var pair = TLSPair(
            client: try TLSStream(client: try TLSFixture.trustingClient(), serverName: "example.org"),
            server: try TLSStream(server: try TLSFixture.serverContext()))
        #expect {
            _ = try pair.pump()
        } throws: { error in
            guard case .handshakeFailed(let reason) = error as? TLSError else { return false }
            return reason.contains("hostname mismatch")
        }
    }

    @Test func untrustedCertificateFailsAndInsecureClientAcceptsIt() throws {
        let other = try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970), subjectAltNames: "DNS:localhost")
        let stranger = try TLSContext.client(trust: .certificates(pem: other.certificatePEM))
        var refused = TLSPair(
            client: try TLSStream(client: stranger, serverName: "localhost"),
            server: try TLSStream(server: try TLSFixture.serverContext()))
        #expect {
            _ = try refused.pump()
        } throws: { error in
            guard case .handshakeFailed(let reason) = error as? TLSError else { return false }
            return reason.contains("self-signed certificate") || reason.contains("unable to get local issuer")
        }

        var insecure = TLSPair(
            client: try TLSStream(client: try TLSContext.client(trust: .insecureNoVerification), serverName: "localhost"),
            server: try TLSStream(server: try TLSFixture.serverContext()))
        _ = try insecure.pump()
        #expect(insecure.client.phase == .established)
    }

    @Test func garbageAndPlainHTTPFailOnlyThatStreamWithAnAlert() throws {
        let context = try TLSFixture.serverContext()
        for junk in [Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), [UInt8](repeating: 0xFF, count: 300)] {
            var server = try TLSStream(server: context)
            #expect(throws: TLSError.self) { _ = try server.receive(junk) }
            #expect(server.phase == .closed)
            // Further input is refused with the same error, not processed.
            #expect(throws: TLSError.self) { _ = try server.receive([22, 3, 1]) }
        }
        // The context still serves a proper client afterwards.
        var pair = TLSPair(
            client: try TLSStream(client: try TLSFixture.trustingClient(), serverName: "localhost"),
            server: try TLSStream(server: context))
        _ = try pair.pump()
        #expect(pair.server.phase == .established)
    }

    @Test func corruptedRecordAfterHandshakeFailsTheConnection() throws {
        var pair = TLSPair(
            client: try TLSStream(client: try TLSFixture.trustingClient(), serverName: "localhost"),
            server: try TLSStream(server: try TLSFixture.serverContext()))
        _ = try pair.pump()
        try pair.client.send(Array("hello".utf8))
        var record = pair.client.takeOutput()
        record[record.count - 3] ^= 0x40  // breaks the AEAD tag (RFC 8446 section 5.2)
        #expect {
            _ = try pair.server.receive(record)
        } throws: { error in
            if case .connectionFailed = error as? TLSError { return true }
            return false
        }
        #expect(pair.server.hasOutput == true)  // the bad_record_mac alert for the peer
    }

    @Test func recordsSplitIntoSingleBytesStillArrive() throws {
        var pair = TLSPair(
            client: try TLSStream(client: try TLSFixture.trustingClient(), serverName: "localhost"),
            server: try TLSStream(server: try TLSFixture.serverContext()))
        _ = try pair.pump()
        try pair.client.send(Array("byte by byte".utf8))
        var received: [UInt8] = []
        for byte in pair.client.takeOutput() { received += try pair.server.receive([byte]) }
        #expect(received == Array("byte by byte".utf8))
    }

    @Test func pendingPlaintextBeforeTheHandshakeIsBounded() throws {
        var limits = TLSLimits()
        limits.maxPendingPlaintext = 1000
        var client = try TLSStream(client: try TLSFixture.trustingClient(), serverName: "localhost", limits: limits)
        try client.send([UInt8](repeating: 1, count: 600))
        #expect(throws: TLSError.pendingLimitExceeded) { try client.send([UInt8](repeating: 1, count: 600)) }
    }

    @Test func closeNotifyIsAnsweredAndEndsTheStream() throws {
        var pair = TLSPair(
            client: try TLSStream(client: try TLSFixture.trustingClient(), serverName: "localhost"),
            server: try TLSStream(server: try TLSFixture.serverContext()))
        _ = try pair.pump()
        // A last request and close_notify in one read: the answer may still go.
        try pair.client.send(Array("last".utf8))
        pair.client.shutdown()
        #expect(try pair.server.receive(pair.client.takeOutput()) == Array("last".utf8))
        #expect(pair.server.receivedCloseNotify == true)
        #expect(try pair.server.receive([23, 3, 3, 0, 1, 0]).isEmpty)  // ignored after close_notify
        try pair.server.send(Array("answer".utf8))
        pair.server.shutdown()
        #expect(pair.server.phase == .closed)
        #expect(try pair.client.receive(pair.server.takeOutput()) == Array("answer".utf8))
        #expect(pair.client.receivedCloseNotify == true)
    }

    @Test func tls12IsAcceptedAndOlderVersionsAreNot() throws {
        // A ClientHello that offers at most TLS 1.1 (legacy_version 0x0302,
        // no supported_versions extension): the server must refuse it with
        // a protocol_version alert (RFC 8996 section 5).
        var hello: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x03, 0x02] + [UInt8](repeating: 0x11, count: 32)
        hello += [0x00, 0x00, 0x02, 0x00, 0x2F, 0x01, 0x00]  // no session id; one suite; null compression
        let length = hello.count - 4
        hello[1] = UInt8(length >> 16)
        hello[2] = UInt8((length >> 8) & 0xFF)
        hello[3] = UInt8(length & 0xFF)
        let record: [UInt8] = [0x16, 0x03, 0x01, UInt8(hello.count >> 8), UInt8(hello.count & 0xFF)] + hello
        var server = try TLSStream(server: try TLSFixture.serverContext())
        #expect(throws: TLSError.self) { _ = try server.receive(record) }
    }

    @Test func clientOfferingOnlyOtherALPNProtocolsIsRefused() throws {
        // RFC 7301 section 3.2: no common protocol is a fatal alert. Our
        // client always offers http/1.1, so take its ClientHello and swap
        // the name for "h2" padded to the same length ("h2xxxxxx").
        var client = try TLSStream(client: try TLSFixture.trustingClient(), serverName: "localhost")
        var hello = client.takeOutput()
        let name = Array("http/1.1".utf8)
        let at = try #require((0...(hello.count - name.count)).first { Array(hello[$0..<$0 + name.count]) == name })
        hello.replaceSubrange(at..<at + name.count, with: Array("h2xxxxxx".utf8))
        var server = try TLSStream(server: try TLSFixture.serverContext())
        #expect(throws: TLSError.self) { _ = try server.receive(hello) }
    }
}
