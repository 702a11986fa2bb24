import COpenSSL
import CShim
import CryptoPrimitives

/// Our DTLS identity: an ECDSA P-256 key and a self-signed X.509
/// certificate (RFC 8827 section 6.5: WebRTC endpoints authenticate by the
/// fingerprint in SDP, not by a CA chain).
///
/// Owns one `X509` and one `EVP_PKEY` and frees them in `deinit`. Endpoints
/// take their own references (`SSL_CTX_use_certificate` and
/// `SSL_CTX_use_PrivateKey` up-ref), so one certificate may back many
/// endpoints and outlive or predecease them.
///
/// `@unchecked Sendable`: both handles are immutable after `init`, and
/// OpenSSL allows concurrent read-only use of a shared X509 / EVP_PKEY; the
/// reference counts it bumps are atomic.
package final class DTLSCertificate: @unchecked Sendable {
    let x509: OpaquePointer
    let privateKey: OpaquePointer

    private init(x509: OpaquePointer, privateKey: OpaquePointer) {
        self.x509 = x509
        self.privateKey = privateKey
    }

    deinit {
        X509_free(x509)
        EVP_PKEY_free(privateKey)
    }

    /// Generates a fresh key and a certificate valid from one day before to
    /// 30 days after `issuedAt`, a wall-clock time in seconds since the Unix
    /// epoch. The caller passes the time: this target never reads a clock.
    /// The serial number is 64 random bits; subject and issuer are
    /// CN=swiftlet.
    ///
    /// `subjectAltNames` (RFC 5280 section 4.2.1.6, in OpenSSL's
    /// `DNS:localhost,IP:127.0.0.1` form) makes the same certificate serve
    /// as a development HTTPS certificate: TLS clients match the host name
    /// against this extension, not the common name (RFC 6125 section 6.4.4).
    /// Empty for DTLS, where the fingerprint in SDP authenticates.
    package static func generate(
        issuedAt unixSeconds: Int64, subjectAltNames: String = ""
    ) throws(DTLSError)
        -> DTLSCertificate
    {
        ERR_clear_error()
        guard let key = swiftlet_EVP_EC_gen_p256() else {
            throw .certificateGenerationFailed(reason: drainOpenSSLErrors(fallback: "EVP_EC_gen failed"))
        }
        guard let x509 = X509_new() else {
            EVP_PKEY_free(key)
            throw .certificateGenerationFailed(reason: drainOpenSSLErrors(fallback: "X509_new failed"))
        }
        // From here both handles belong to `certificate`, whose deinit frees
        // them if a later step throws.
        let certificate = DTLSCertificate(x509: x509, privateKey: key)

        var serial: UInt64 = 0
        let randomOK = withUnsafeMutableBytes(of: &serial) {
            RAND_bytes($0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32($0.count)) == 1
        }
        let day: Int64 = 86_400
        let ok =
            randomOK
            && X509_set_version(x509, 2) == 1  // v3
            && ASN1_INTEGER_set_uint64(X509_get_serialNumber(x509), serial) == 1
            && ASN1_TIME_set(X509_getm_notBefore(x509), Int(truncatingIfNeeded: unixSeconds &- day)) != nil
            && ASN1_TIME_set(X509_getm_notAfter(x509), Int(truncatingIfNeeded: unixSeconds &+ 30 &* day)) != nil
            && X509_set_pubkey(x509, key) == 1
            && setCommonName(X509_get_subject_name(x509))
            && X509_set_issuer_name(x509, X509_get_subject_name(x509)) == 1
            && (subjectAltNames.isEmpty || addExtension(x509, NID_subject_alt_name, subjectAltNames))
            && X509_sign(x509, key, EVP_sha256()) > 0
        guard ok else {
            throw .certificateGenerationFailed(reason: drainOpenSSLErrors(fallback: "building the certificate failed"))
        }
        return certificate
    }

    private static func addExtension(_ x509: OpaquePointer, _ nid: Int32, _ value: String) -> Bool {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, x509, x509, nil, nil, 0)
        guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else { return false }
        defer { X509_EXTENSION_free(ext) }
        return X509_add_ext(x509, ext, -1) == 1
    }

    private static func setCommonName(_ name: OpaquePointer?) -> Bool {
        guard let name else { return false }
        return X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "swiftlet", -1, -1, 0) == 1
    }

    /// Loads a certificate and its private key from PEM text (as written by
    /// `certificatePEM` and `privateKeyPEM`). Fails if either does not parse
    /// or the key does not belong to the certificate.
    package convenience init(certificatePEM: String, privateKeyPEM: String) throws(DTLSError) {
        ERR_clear_error()
        guard let x509 = readPEM(certificatePEM, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            throw .invalidPEM(reason: drainOpenSSLErrors(fallback: "no certificate in PEM"))
        }
        guard let key = readPEM(privateKeyPEM, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            X509_free(x509)
            throw .invalidPEM(reason: drainOpenSSLErrors(fallback: "no private key in PEM"))
        }
        guard X509_check_private_key(x509, key) == 1 else {
            X509_free(x509)
            EVP_PKEY_free(key)
            throw .invalidPEM(reason: drainOpenSSLErrors(fallback: "private key does not match certificate"))
        }
        self.init(x509: x509, privateKey: key)
    }

    /// The certificate in PEM ("-----BEGIN CERTIFICATE-----").
    package var certificatePEM: String {
        Self.writePEM { PEM_write_bio_X509($0, x509) == 1 }
    }

    /// The private key in unencrypted PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----").
    package var privateKeyPEM: String {
        Self.writePEM { PEM_write_bio_PrivateKey($0, privateKey, nil, nil, 0, nil, nil) == 1 }
    }

    private static func writePEM(_ write: (OpaquePointer) -> Bool) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard write(bio) else { return "" }
        let pending = Int(BIO_ctrl_pending(bio))
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(clamping: $0.count)) }
        return String(decoding: bytes.prefix(max(0, Int(read))), as: UTF8.self)
    }

    /// The validity window in seconds since the Unix epoch (RFC 5280
    /// section 4.1.2.5); nil if OpenSSL cannot read it.
    package var validity: (notBefore: Int64, notAfter: Int64)? {
        guard let epoch = ASN1_TIME_set(nil, 0) else { return nil }
        defer { ASN1_TIME_free(epoch) }
        func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
            var days: Int32 = 0, secs: Int32 = 0
            guard let time, ASN1_TIME_diff(&days, &secs, epoch, time) == 1 else { return nil }
            return Int64(days) * 86_400 + Int64(secs)
        }
        guard let from = seconds(X509_get0_notBefore(x509)), let to = seconds(X509_get0_notAfter(x509)) else {
            return nil
        }
        return (from, to)
    }

    /// The subject in OpenSSL's one-line form, e.g. "/CN=swiftlet".
    package var subject: String {
        var buffer = [CChar](repeating: 0, count: 256)
        return buffer.withUnsafeMutableBufferPointer { p -> String in
            guard X509_NAME_oneline(X509_get_subject_name(x509), p.baseAddress, Int32(p.count)) != nil else { return "" }
            return String(decoding: p.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// This certificate's fingerprint, for our SDP `a=fingerprint` line.
    package func fingerprint(_ algorithm: CertificateFingerprint.Algorithm = .sha256) -> CertificateFingerprint {
        // X509_digest fails only when allocation fails: a certificate we hold
        // always has a DER encoding.
        guard let fingerprint = certificateFingerprint(of: x509, algorithm) else {
            preconditionFailure("X509_digest failed on our own certificate")
        }
        return fingerprint
    }
}

/// The digest of a certificate's DER encoding (RFC 8122 section 5).
func certificateFingerprint(of x509: OpaquePointer, _ algorithm: CertificateFingerprint.Algorithm) -> CertificateFingerprint? {
    let md: OpaquePointer? =
        switch algorithm {
        case .sha1: EVP_sha1()
        case .sha224: EVP_sha224()
        case .sha256: EVP_sha256()
        case .sha384: EVP_sha384()
        case .sha512: EVP_sha512()
        }
    var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    let ok = digest.withUnsafeMutableBufferPointer { X509_digest(x509, md, $0.baseAddress, &length) == 1 }
    guard ok else { return nil }
    return CertificateFingerprint(algorithm: algorithm, digest: Array(digest.prefix(Int(length))))
}
