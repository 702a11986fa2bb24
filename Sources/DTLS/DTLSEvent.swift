import Wire

/// What a `DTLSEndpoint` reports through `pollEvent()`.
public enum DTLSEvent: Equatable, Sendable {
    /// The handshake finished and the peer's certificate matched one of its
    /// SDP fingerprints. Reported once.
    case connected(DTLSConnected)
    /// The endpoint gave up; it ignores further input. Reported once.
    case failed(DTLSError)
    /// The peer sent close_notify (RFC 5246 section 7.2.1). Reported once.
    case closed
}

/// The outcome of a DTLS-SRTP handshake (RFC 5764 section 4.2).
public struct DTLSConnected: Equatable, Sendable {
    /// The negotiated SRTP protection profile, as on the wire.
    public let srtpProfileID: UInt16
    /// `SSL_export_keying_material` with label "EXTRACTOR-dtls_srtp", no
    /// context, 2 * (key + salt) bytes, laid out as client write key |
    /// server write key | client write salt | server write salt.
    public let keyingMaterial: [UInt8]
    /// The expected fingerprint the peer's certificate matched.
    public let peerFingerprint: CertificateFingerprint

    public init(srtpProfileID: UInt16, keyingMaterial: [UInt8], peerFingerprint: CertificateFingerprint) {
        self.srtpProfileID = srtpProfileID
        self.keyingMaterial = keyingMaterial
        self.peerFingerprint = peerFingerprint
    }

    /// The profile, when it is one we implement. The SRTP target splits
    /// `keyingMaterial` into keys and salts (`SRTPKeyingMaterial`).
    public var srtpProfile: SRTPProfile? { SRTPProfile(dtlsProfileID: srtpProfileID) }
}
