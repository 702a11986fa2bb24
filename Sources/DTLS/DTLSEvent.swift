import Wire

/// What a `DTLSEndpoint` reports through `pollEvent()`.
package enum DTLSEvent: Equatable, Sendable {
    /// The handshake finished and the peer's certificate matched one of its
    /// SDP fingerprints. Reported once.
    case connected(DTLSConnected)
    /// The endpoint gave up; it ignores further input. Reported once.
    case failed(DTLSError)
    /// The peer sent close_notify (RFC 5246 section 7.2.1). Reported once.
    case closed
}

/// The outcome of a DTLS-SRTP handshake (RFC 5764 section 4.2).
package struct DTLSConnected: Equatable, Sendable {
    /// The negotiated SRTP protection profile, as on the wire.
    package let srtpProfileID: UInt16
    /// `SSL_export_keying_material` with label "EXTRACTOR-dtls_srtp", no
    /// context, 2 * (key + salt) bytes, laid out as client write key |
    /// server write key | client write salt | server write salt.
    package let keyingMaterial: [UInt8]
    /// The expected fingerprint the peer's certificate matched.
    package let peerFingerprint: CertificateFingerprint

    package init(srtpProfileID: UInt16, keyingMaterial: [UInt8], peerFingerprint: CertificateFingerprint) {
        self.srtpProfileID = srtpProfileID
        self.keyingMaterial = keyingMaterial
        self.peerFingerprint = peerFingerprint
    }

    /// The profile, when it is one we implement. The SRTP target splits
    /// `keyingMaterial` into keys and salts (`SRTPKeyingMaterial`).
    package var srtpProfile: SRTPProfile? { SRTPProfile(dtlsProfileID: srtpProfileID) }
}
