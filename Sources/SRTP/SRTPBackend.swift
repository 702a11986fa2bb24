/// Which implementation an `SRTPSession` runs on. Both give the same bytes
/// on the wire and the same `SRTPError`s; the choice is about cost.
package enum SRTPBackend: String, Sendable, Hashable, CaseIterable {
    /// Our own SRTP over OpenSSL 3 EVP contexts made once per session
    /// (`OpenSSLSRTPEngine`): no allocation per packet.
    case openssl
    /// Debian's libsrtp2 2.5 (built on NSS, which sets up and allocates
    /// per packet). Kept as the reference and for comparison.
    case libsrtp2

    package static let `default`: SRTPBackend = .openssl
}
