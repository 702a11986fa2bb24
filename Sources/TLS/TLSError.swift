/// Everything that can go wrong in this target. Bad network input never
/// traps: OpenSSL fails the connection (after queuing an alert for the
/// peer, RFC 8446 section 6.2), which surfaces as `.handshakeFailed` or
/// `.connectionFailed` and costs that one connection.
package enum TLSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The handshake failed: a bad record, no common version or cipher, no
    /// common ALPN protocol (RFC 7301 section 3.2), or a certificate that
    /// did not verify. The reason is OpenSSL's error queue, and for a
    /// failed verification the X.509 verify result.
    case handshakeFailed(reason: String)
    /// After the handshake, a bad record or a fatal alert ended it.
    case connectionFailed(reason: String)
    /// The application wrote more than `TLSLimits.maxPendingPlaintext`
    /// before the handshake finished.
    case pendingLimitExceeded
    /// A PEM text held no certificate or key, or the key does not belong
    /// to the certificate.
    case invalidCredentials(reason: String)
    /// Configuring OpenSSL (context, session, BIOs) failed.
    case setupFailed(reason: String)

    package var description: String {
        switch self {
        case .handshakeFailed(let reason): "TLS handshake failed: \(reason)"
        case .connectionFailed(let reason): "TLS connection failed: \(reason)"
        case .pendingLimitExceeded: "too much data written before the TLS handshake finished"
        case .invalidCredentials(let reason): "TLS certificate or key: \(reason)"
        case .setupFailed(let reason): "TLS setup failed: \(reason)"
        }
    }
}
