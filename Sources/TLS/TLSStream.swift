import COpenSSL
import CShim
import CryptoPrimitives

/// Bounds of one `TLSStream`.
package struct TLSLimits: Sendable, Equatable {
    /// Plaintext the application may write before the handshake ends;
    /// beyond it `send` throws `.pendingLimitExceeded`.
    package var maxPendingPlaintext = 1 << 20
    package init() {}
}

/// One TLS connection over a byte stream, sans-IO (RFC 8446, RFC 5246):
/// ciphertext in (`receive`), plaintext out (its result); plaintext in
/// (`send`), ciphertext out (`takeOutput`). After any call, send what
/// `takeOutput()` returns. OpenSSL does the protocol between two memory
/// BIOs (a byte stream needs no record boundaries, unlike DTLS's
/// `DatagramBIO`), so it never sees a socket. No timers: the shell bounds
/// the handshake with its own deadline.
///
/// Plaintext written before the handshake ends waits (bounded by
/// `TLSLimits`) and goes out when it ends. A fatal error queues OpenSSL's
/// alert for the peer and is thrown from then on; the caller sends the
/// alert and closes. `shutdown()` queues close_notify (RFC 8446 section
/// 6.1); `receivedCloseNotify` says the peer sent its own, after which
/// input is ignored and the caller answers with `shutdown()` once it has
/// sent what it still had.
///
/// Owns one `SSL` (which owns both BIOs and a reference to its context)
/// and frees it in `deinit`. Single owner, not `Sendable`.
package struct TLSStream: ~Copyable {
    package enum Phase: Equatable, Sendable {
        /// `established`: data flows both ways until a close_notify.
        /// `closed`: failed, shut down before the handshake ended, or both
        /// sides sent close_notify.
        case handshaking, established, closed
    }

    package let role: TLSContext.Role
    private let ssl: OpaquePointer
    /// Ciphertext from the peer, read by OpenSSL.
    private let incoming: OpaquePointer
    /// Ciphertext for the peer, written by OpenSSL.
    private let outgoing: OpaquePointer
    private let limits: TLSLimits
    package private(set) var phase = Phase.handshaking
    package private(set) var receivedCloseNotify = false
    /// `shutdown()` was called: nothing more is sent; the peer's remaining
    /// data is still read (a half-close, RFC 8446 section 6.1).
    package private(set) var sentCloseNotify = false
    private var failure: TLSError?
    private var pending: [UInt8] = []

    /// A server connection, waiting for the ClientHello.
    package init(server context: TLSContext, limits: TLSLimits = TLSLimits()) throws(TLSError) {
        precondition(context.role == .server, "a server stream needs a server context")
        (ssl, incoming, outgoing) = try Self.makeSession(context)
        role = .server
        self.limits = limits
        SSL_set_accept_state(ssl)
    }

    /// A client connection to `serverName` (a DNS name or an IP address).
    /// A DNS name goes out as SNI (RFC 6066 section 3) and, when the context
    /// verifies, must match the certificate (RFC 6125); an IP address must
    /// match an IP subjectAltName. The ClientHello is in `takeOutput()` at
    /// once.
    package init(client context: TLSContext, serverName: String, limits: TLSLimits = TLSLimits()) throws(TLSError) {
        precondition(context.role == .client, "a client stream needs a client context")
        let (ssl, incoming, outgoing) = try Self.makeSession(context)
        let isIP = Self.isIPAddress(serverName)
        var ok = true
        if !isIP { ok = swiftlet_SSL_set_tlsext_host_name(ssl, serverName) == 1 }
        if context.verifies {
            ok =
                ok
                && (isIP
                    ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1
                    : SSL_set1_host(ssl, serverName) == 1)
        }
        // The protocol list: length-prefixed names (RFC 7301 section 3.1).
        let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
        ok = ok && SSL_set_alpn_protos(ssl, alpn, UInt32(alpn.count)) == 0
        guard ok else {
            SSL_free(ssl)
            throw .setupFailed(reason: drainOpenSSLErrors(fallback: "cannot set the server name '\(serverName)'"))
        }
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        role = .client
        self.limits = limits
        SSL_set_connect_state(ssl)
        advanceHandshake()
    }

    deinit { SSL_free(ssl) }

    private static func makeSession(_ context: TLSContext) throws(TLSError) -> (OpaquePointer, OpaquePointer, OpaquePointer) {
        ERR_clear_error()
        guard let ssl = SSL_new(context.context) else {
            throw .setupFailed(reason: drainOpenSSLErrors(fallback: "SSL_new failed"))
        }
        guard let incoming = BIO_new(BIO_s_mem()), let outgoing = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .setupFailed(reason: "BIO_new failed")
        }
        // An empty memory BIO reads as "retry later", not end of file: the
        // rest of the record is still on its way.
        _ = swiftlet_BIO_set_mem_eof_return(incoming, -1)
        _ = swiftlet_BIO_set_mem_eof_return(outgoing, -1)
        SSL_set_bio(ssl, incoming, outgoing)  // the SSL owns both from here
        return (ssl, incoming, outgoing)
    }

    private static func isIPAddress(_ name: String) -> Bool {
        // An IPv6 literal has colons; an IPv4 literal is dots and digits.
        name.contains(":") || (!name.isEmpty && name.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber })
    }

    // MARK: Input

    /// Ciphertext from the peer, in chunks of any size. Returns the
    /// plaintext it completed (empty while a record is partial or the
    /// handshake goes on). Throws on a fatal error; the alert for the peer
    /// is then in `takeOutput()`.
    package mutating func receive(_ ciphertext: UnsafeRawBufferPointer) throws(TLSError) -> [UInt8] {
        if let failure { throw failure }
        // After our close_notify (or the peer's) the rest is ignored.
        guard phase != .closed, !receivedCloseNotify, !ciphertext.isEmpty else { return [] }
        // Memory BIO writes grow the buffer: bounded by the caller's chunk,
        // and OpenSSL reads out every complete record below.
        var offset = 0
        while offset < ciphertext.count {
            let chunk = Int32(clamping: ciphertext.count - offset)
            let n = BIO_write(incoming, ciphertext.baseAddress! + offset, chunk)
            guard n > 0 else { throw fail(.connectionFailed(reason: "BIO_write failed")) }
            offset += Int(n)
        }
        if phase == .handshaking {
            try advanceHandshakeOrThrow()
            guard phase == .established else { return [] }
        }
        return try readPlaintext()
    }

    package mutating func receive(_ ciphertext: [UInt8]) throws(TLSError) -> [UInt8] {
        var result: Result<[UInt8], TLSError> = .success([])
        ciphertext.withUnsafeBytes { bytes in
            do throws(TLSError) { result = .success(try receive(bytes)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    private mutating func readPlaintext() throws(TLSError) -> [UInt8] {
        var plaintext: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while !receivedCloseNotify {
            ERR_clear_error()
            let n = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if n > 0 {
                plaintext += buffer[0..<Int(n)]
                continue
            }
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return plaintext
            case SSL_ERROR_ZERO_RETURN:
                // close_notify (RFC 8446 section 6.1) closes the peer's
                // side only: what we still send (an answer to a request in
                // the same read) goes out before our own `shutdown()`.
                receivedCloseNotify = true
                if sentCloseNotify { phase = .closed }
            default:
                throw fail(.connectionFailed(reason: drainOpenSSLErrors(fallback: "SSL_read failed")))
            }
        }
        return plaintext
    }

    private mutating func advanceHandshake() {
        do throws(TLSError) { try advanceHandshakeOrThrow() } catch {}
    }

    private mutating func advanceHandshakeOrThrow() throws(TLSError) {
        ERR_clear_error()
        let rc = SSL_do_handshake(ssl)
        if rc == 1 {
            phase = .established
            let waiting = pending
            pending = []
            if !waiting.isEmpty { try write(waiting) }
            return
        }
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return
        default:
            var reason = drainOpenSSLErrors(fallback: "SSL_do_handshake failed")
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK, let text = X509_verify_cert_error_string(verify) {
                reason += " (certificate: \(String(cString: text)))"
            }
            throw fail(.handshakeFailed(reason: reason))
        }
    }

    // MARK: Output

    /// Encrypts `plaintext` into `takeOutput()`; before the handshake ends
    /// it waits, bounded by `TLSLimits.maxPendingPlaintext`. Ignored after
    /// `shutdown()`.
    package mutating func send(_ plaintext: [UInt8]) throws(TLSError) {
        if let failure { throw failure }
        guard phase != .closed, !sentCloseNotify, !plaintext.isEmpty else { return }
        if phase == .handshaking {
            guard pending.count + plaintext.count <= limits.maxPendingPlaintext else {
                throw fail(.pendingLimitExceeded)
            }
            pending += plaintext
            return
        }
        try write(plaintext)
    }

    private mutating func write(_ plaintext: [UInt8]) throws(TLSError) {
        ERR_clear_error()
        // A memory BIO takes everything, so SSL_write writes it all at once
        // (in records of at most 2^14 bytes, RFC 8446 section 5.1).
        let n = plaintext.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32(clamping: $0.count)) }
        guard n == Int32(clamping: plaintext.count) else {
            throw fail(.connectionFailed(reason: drainOpenSSLErrors(fallback: "SSL_write failed")))
        }
    }

    /// Queues close_notify (RFC 8446 section 6.1); nothing more is sent.
    /// Call before closing the TCP connection.
    package mutating func shutdown() {
        guard phase != .closed, !sentCloseNotify, failure == nil else { return }
        sentCloseNotify = true
        pending = []
        guard phase == .established else {
            phase = .closed  // nothing to close politely before the handshake ends
            return
        }
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
        if receivedCloseNotify { phase = .closed }
    }

    /// Ciphertext to send now (handshake flights, records, alerts).
    package mutating func takeOutput() -> [UInt8] {
        let count = Int(BIO_ctrl_pending(outgoing))
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { BIO_read(outgoing, $0.baseAddress, Int32(clamping: $0.count)) }
        return n > 0 ? Array(bytes.prefix(Int(n))) : []
    }

    package var hasOutput: Bool { BIO_ctrl_pending(outgoing) > 0 }

    // MARK: Negotiated

    /// "TLSv1.3" or "TLSv1.2".
    package var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The ALPN protocol both sides agreed on, if any (RFC 7301).
    package var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    private mutating func fail(_ error: TLSError) -> TLSError {
        failure = error
        phase = .closed
        pending = []
        return error
    }
}
