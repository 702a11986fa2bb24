import COpenSSL

/// Everything that can go wrong in this target. Bad network input never
/// traps: OpenSSL either discards it silently (RFC 6347 section 4.1.2.7) or
/// fails the handshake, which surfaces as `.handshakeFailed`.
package enum DTLSError: Error, Equatable, Sendable {
    /// OpenSSL failed the handshake or the connection; the reason is its
    /// error queue rendered with `ERR_error_string_n`.
    case handshakeFailed(reason: String)
    /// After the handshake, OpenSSL failed the connection (a fatal alert or
    /// a protocol error); the reason is its error queue.
    case connectionFailed(reason: String)
    /// The peer's certificate matched none of the fingerprints from its SDP
    /// (RFC 5763 section 5; RFC 8122 section 5).
    case fingerprintMismatch
    /// The handshake made no progress through every retransmission
    /// (RFC 6347 section 4.2.4).
    case timeout
    /// The handshake finished without a `use_srtp` agreement (RFC 5764
    /// section 4.1.2): DTLS-SRTP cannot key media.
    case noSRTPProfile
    /// `SSL_export_keying_material` failed (RFC 5764 section 4.2).
    case keyingMaterialExportFailed
    /// Creating a key or certificate failed.
    case certificateGenerationFailed(reason: String)
    /// A PEM string did not hold a certificate or key, or they do not match.
    case invalidPEM(reason: String)
    /// Configuring OpenSSL (context, session, BIO) failed.
    case setupFailed(reason: String)
}
