import Wire

/// The six session keys one SRTP master key yields (RFC 3711 section 4.3,
/// labels 0x00 to 0x05): cipher key, authentication key and salt, for SRTP
/// and for SRTCP. AES-GCM has no authentication keys (RFC 7714 section 11),
/// so they are empty there. The OpenSSL engine is keyed from this value.
///
/// Made from a master key (`init(deriving:profile:)`, what every session
/// does) or given directly (`init(profile:rtpKey:...)`), which only
/// known-answer vectors need: RFC 7714 section 16's and 17's are stated
/// in session keys, with no derivation step.
package struct SRTPSessionKeys: Sendable {
    /// The profile whose lengths the keys were checked against.
    package let profile: SRTPProfile
    package private(set) var rtpKey: [UInt8]
    package private(set) var rtpAuthKey: [UInt8]
    package private(set) var rtpSalt: [UInt8]
    package private(set) var rtcpKey: [UInt8]
    package private(set) var rtcpAuthKey: [UInt8]
    package private(set) var rtcpSalt: [UInt8]

    /// Session keys as given. Lengths must suit `profile`: a 16-byte key,
    /// a `masterSaltLength` salt, and a 20-byte HMAC-SHA1 key for AES-CM
    /// (empty for GCM); otherwise `wrongKeyLength`.
    package init(
        profile: SRTPProfile, rtpKey: [UInt8], rtpAuthKey: [UInt8] = [], rtpSalt: [UInt8],
        rtcpKey: [UInt8], rtcpAuthKey: [UInt8] = [], rtcpSalt: [UInt8]
    ) throws(SRTPError) {
        let authLength = profile == .aeadAES128GCM ? 0 : Self.authKeyLength
        for (actual, expected) in [
            (rtpKey.count, profile.masterKeyLength), (rtcpKey.count, profile.masterKeyLength),
            (rtpSalt.count, profile.masterSaltLength), (rtcpSalt.count, profile.masterSaltLength),
            (rtpAuthKey.count, authLength), (rtcpAuthKey.count, authLength),
        ] where actual != expected {
            throw .wrongKeyLength(expected: expected, actual: actual)
        }
        self.profile = profile
        self.rtpKey = rtpKey
        self.rtpAuthKey = rtpAuthKey
        self.rtpSalt = rtpSalt
        self.rtcpKey = rtcpKey
        self.rtcpAuthKey = rtcpAuthKey
        self.rtcpSalt = rtcpSalt
    }

    /// Derives the keys with key_derivation_rate 0 (RFC 5764 section 4.1.2).
    package init(deriving masterKey: SRTPMasterKey, profile: SRTPProfile) throws(SRTPError) {
        let gcm = profile == .aeadAES128GCM
        func derive(_ label: UInt8, _ length: Int) throws(SRTPError) -> [UInt8] {
            try SRTPKeyDerivation.derive(masterKey: masterKey, label: label, length: length)
        }
        try self.init(
            profile: profile,
            rtpKey: derive(0x00, profile.masterKeyLength), rtpAuthKey: gcm ? [] : derive(0x01, Self.authKeyLength),
            rtpSalt: derive(0x02, profile.masterSaltLength),
            rtcpKey: derive(0x03, profile.masterKeyLength), rtcpAuthKey: gcm ? [] : derive(0x04, Self.authKeyLength),
            rtcpSalt: derive(0x05, profile.masterSaltLength))
    }

    /// HMAC-SHA1's key, n_a = 160 bits (RFC 3711 section 8.2).
    static let authKeyLength = 20

    /// Overwrites the keys once the cipher contexts hold them.
    mutating func erase() {
        for i in rtpKey.indices { rtpKey[i] = 0 }
        for i in rtcpKey.indices { rtcpKey[i] = 0 }
        for i in rtpAuthKey.indices { rtpAuthKey[i] = 0 }
        for i in rtcpAuthKey.indices { rtcpAuthKey[i] = 0 }
    }
}
