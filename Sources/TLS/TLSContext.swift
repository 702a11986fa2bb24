import COpenSSL
import CShim
import CryptoPrimitives

/// The configuration every connection of one role shares: an `SSL_CTX`
/// with TLS 1.2 as the floor and 1.3 allowed (RFC 8996 retires 1.0 and
/// 1.1), ALPN `http/1.1` (RFC 7301), and either our certificate chain
/// (server) or the trust anchors a server must chain to (client).
///
/// Owns one `SSL_CTX` and frees it in `deinit`; each `TLSStream` takes its
/// own reference (`SSL_new` up-refs the context), so a context replaced on
/// reload lives on until its last connection ends.
///
/// `@unchecked Sendable`: the context is configured in `init` and never
/// changed after, and OpenSSL allows creating connections from a shared,
/// unchanging `SSL_CTX` on several threads.
package final class TLSContext: @unchecked Sendable {
    package enum Role: Sendable, Equatable {
        case client, server
    }

    /// What a client trusts.
    package enum Trust: Sendable, Equatable {
        /// OpenSSL's default verify paths (the system CA bundle).
        case system
        /// These PEM certificates only (a test or private CA, or a
        /// self-signed server certificate itself).
        case certificates(pem: String)
        /// No verification at all: anyone in the path can read and change
        /// the traffic. For tests against a throwaway certificate.
        case insecureNoVerification
    }

    package let role: Role
    let context: OpaquePointer
    /// The server's leaf certificate in DER; empty for a client.
    package let leafCertificateDER: [UInt8]
    /// SHA-256 of the leaf's DER SubjectPublicKeyInfo (RFC 5280 section
    /// 4.1.2.7), the value Chromium's `--ignore-certificate-errors-spki-list`
    /// takes (base64) and HPKP pinned (RFC 7469 section 2.4); empty for a
    /// client.
    package let leafSPKISHA256: [UInt8]
    /// The leaf's subject in OpenSSL's one-line form; empty for a client.
    package let leafSubject: String
    let verifies: Bool

    private init(role: Role, context: OpaquePointer, leaf: OpaquePointer?, verifies: Bool) {
        self.role = role
        self.context = context
        self.verifies = verifies
        if let leaf {
            leafCertificateDER = Self.der { i2d_X509(leaf, $0) }
            leafSPKISHA256 = Digest.sha256(Self.der { i2d_PUBKEY(X509_get0_pubkey(leaf), $0) })
            var buffer = [CChar](repeating: 0, count: 512)
            leafSubject = buffer.withUnsafeMutableBufferPointer { p -> String in
                guard X509_NAME_oneline(X509_get_subject_name(leaf), p.baseAddress, Int32(p.count)) != nil else { return "" }
                return String(decoding: p.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        } else {
            leafCertificateDER = []
            leafSPKISHA256 = []
            leafSubject = ""
        }
    }

    deinit { SSL_CTX_free(context) }

    /// A server context from PEM text: `certificateChainPEM` holds the leaf
    /// first, then any intermediates (sent in that order, RFC 8446 section
    /// 4.4.2); `privateKeyPEM` the leaf's key. Fails with a reason naming
    /// what is wrong: no certificate, no key, or a key of another
    /// certificate. The caller reads the files: this target does no I/O.
    package static func server(certificateChainPEM: String, privateKeyPEM: String) throws(TLSError) -> TLSContext {
        ERR_clear_error()
        let chain = readCertificates(certificateChainPEM)
        defer { chain.forEach { X509_free($0) } }
        guard let leaf = chain.first else {
            throw .invalidCredentials(reason: "no certificate in the certificate PEM")
        }
        ERR_clear_error()
        // A password callback that has none: without it OpenSSL would ask
        // for the password of an encrypted key on the terminal, and block.
        guard let key = readPEM(privateKeyPEM, { PEM_read_bio_PrivateKey($0, nil, { _, _, _, _ in 0 }, nil) }) else {
            let reason = drainOpenSSLErrors(fallback: "no private key in the key PEM")
            if privateKeyPEM.contains("ENCRYPTED") {
                throw .invalidCredentials(reason: "the private key is encrypted; give it unencrypted (\(reason))")
            }
            throw .invalidCredentials(reason: reason)
        }
        defer { EVP_PKEY_free(key) }
        guard X509_check_private_key(leaf, key) == 1 else {
            ERR_clear_error()
            throw .invalidCredentials(reason: "the private key does not belong to the certificate")
        }
        let context = try makeContext(TLS_server_method())
        var ok = SSL_CTX_use_certificate(context, leaf) == 1 && SSL_CTX_use_PrivateKey(context, key) == 1
        for intermediate in chain.dropFirst() where ok {
            ok = swiftlet_SSL_CTX_add1_chain_cert(context, intermediate) == 1
        }
        ok = ok && SSL_CTX_check_private_key(context) == 1
        guard ok else {
            SSL_CTX_free(context)
            throw .invalidCredentials(reason: drainOpenSSLErrors(fallback: "OpenSSL refused the certificate or key"))
        }
        SSL_CTX_set_alpn_select_cb(context, selectHTTP11, nil)
        // No session tickets: nothing here resumes sessions, and each ticket
        // is an extra flight per connection (RFC 8446 section 4.6.1).
        _ = SSL_CTX_set_num_tickets(context, 0)
        _ = swiftlet_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
        return TLSContext(role: .server, context: context, leaf: leaf, verifies: false)
    }

    /// A client context that verifies the server against `trust`, offering
    /// ALPN `http/1.1`. The host name to check is given per connection
    /// (`TLSStream(client:serverName:)`).
    package static func client(trust: Trust) throws(TLSError) -> TLSContext {
        ERR_clear_error()
        let context = try makeContext(TLS_client_method())
        switch trust {
        case .system:
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                SSL_CTX_free(context)
                throw .setupFailed(reason: drainOpenSSLErrors(fallback: "no default CA paths"))
            }
        case .certificates(let pem):
            let anchors = readCertificates(pem)
            defer { anchors.forEach { X509_free($0) } }
            let store = SSL_CTX_get_cert_store(context)
            guard !anchors.isEmpty, anchors.allSatisfy({ X509_STORE_add_cert(store, $0) == 1 }) else {
                SSL_CTX_free(context)
                throw .invalidCredentials(reason: "no usable CA certificate in the CA PEM")
            }
        case .insecureNoVerification:
            break
        }
        let verifies = trust != .insecureNoVerification
        SSL_CTX_set_verify(context, verifies ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nil)
        return TLSContext(role: .client, context: context, leaf: nil, verifies: verifies)
    }

    private static func makeContext(_ method: OpaquePointer?) throws(TLSError) -> OpaquePointer {
        guard let context = SSL_CTX_new(method) else {
            throw .setupFailed(reason: drainOpenSSLErrors(fallback: "SSL_CTX_new failed"))
        }
        guard swiftlet_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1,
            swiftlet_SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION) == 1
        else {
            SSL_CTX_free(context)
            throw .setupFailed(reason: drainOpenSSLErrors(fallback: "cannot set TLS versions"))
        }
        return context
    }

    /// Every certificate in a PEM text, in order; other blocks are skipped.
    static func readCertificates(_ pem: String) -> [OpaquePointer] {
        var bytes = Array(pem.utf8)
        guard !bytes.isEmpty, let count = Int32(exactly: bytes.count) else { return [] }
        var certificates: [OpaquePointer] = []
        bytes.withUnsafeMutableBytes { p in
            guard let bio = BIO_new_mem_buf(p.baseAddress, count) else { return }
            defer { BIO_free(bio) }
            // Bounded: each certificate consumes input, and a chain longer
            // than this is no chain a server sends.
            while certificates.count < 16, let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                certificates.append(x509)
            }
        }
        // The read that ends the loop leaves "no start line" behind.
        ERR_clear_error()
        return certificates
    }

    /// The DER encoding an OpenSSL `i2d_` function writes: called once for
    /// the length, once into the buffer.
    private static func der(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8] {
        let length = encode(nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { p -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = p.baseAddress
            return encode(&cursor)
        }
        return written == length ? bytes : []
    }
}

/// ALPN on the server (RFC 7301 section 3.2): pick `http/1.1` from the
/// client's list; a client that offers protocols but not this one gets a
/// fatal `no_application_protocol` alert. A client that offers none gets no
/// ALPN answer and speaks HTTP/1.1 anyway.
private let selectHTTP11:
    @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?,
        UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?
    ) -> Int32 = { _, out, outLength, input, inputLength, _ in
        guard let input, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
        let wanted = Array("http/1.1".utf8)
        // The list is a sequence of <length byte, name> (RFC 7301 section 3.1).
        var i = 0
        let end = Int(inputLength)
        while i < end {
            let length = Int(input[i])
            let start = i + 1
            guard length > 0, start + length <= end else { break }
            if length == wanted.count, (0..<length).allSatisfy({ input[start + $0] == wanted[$0] }) {
                out.pointee = input + start
                outLength.pointee = UInt8(length)
                return SSL_TLSEXT_ERR_OK
            }
            i = start + length
        }
        return SSL_TLSEXT_ERR_ALERT_FATAL
    }
