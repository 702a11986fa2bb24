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

    /// The profile, when it is one this target knows.
    public var srtpProfile: SRTPProtectionProfile? { SRTPProtectionProfile(rawValue: srtpProfileID) }

    /// Master keys and salts split per RFC 5764 section 4.2; nil if the
    /// profile is unknown or the material has the wrong length.
    public var srtpKeys: SRTPMasterKeys? {
        guard let profile = srtpProfile, keyingMaterial.count == profile.keyingMaterialLength else { return nil }
        let k = profile.masterKeyLength, s = profile.masterSaltLength
        return SRTPMasterKeys(
            clientKey: Array(keyingMaterial[0..<k]),
            serverKey: Array(keyingMaterial[k..<2 * k]),
            clientSalt: Array(keyingMaterial[2 * k..<2 * k + s]),
            serverSalt: Array(keyingMaterial[2 * k + s..<2 * k + 2 * s]))
    }
}

/// The four halves of the DTLS-SRTP keying material. The client protects
/// what it sends with the client key and salt; the server with the server's.
public struct SRTPMasterKeys: Equatable, Sendable {
    public let clientKey: [UInt8]
    public let serverKey: [UInt8]
    public let clientSalt: [UInt8]
    public let serverSalt: [UInt8]
}
