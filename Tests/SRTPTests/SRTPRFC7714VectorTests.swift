import SRTP
import Testing
import Wire

// RFC 7714 sections 16 and 17: AEAD_AES_128_GCM known answers for SRTP and
// SRTCP, transcribed from the RFC's hex. The RFC states them in session
// keys (the key and salt go straight into AES-GCM and the IV, with no RFC
// 3711 derivation), so they run on the OpenSSL backend keyed through
// `SRTPSessionKeys`. libsrtp2's session API takes only a master key, so
// it cannot be keyed with them; it meets the same wire format through
// `SRTPBackendOracleTests` (byte-identical output to ours under any master
// key) and libsrtp's own reference packets (`SRTPKnownAnswerTests`).
// AEAD_AES_256_GCM (sections 16.2, 17.5 to 17.8) is not a profile we
// support.

private enum RFC7714 {
    /// Section 16: key 00..0f, salt "Quid pro quo"; the same for SRTCP
    /// (section 17).
    static let key = hex("000102030405060708090a0b0c0d0e0f")
    static let salt = hex("517569642070726f2071756f")

    /// Section 16.1: V=2, M=0, PT=64, SEQ 0xf17b, TS 0x8041f8d3, SSRC
    /// 0x5501a0b2; ROC 0, so the IV is 51753c6580c2726f20718414. Payload
    /// "Gallia est omnis divisa in partes tres".
    static let rtpHeader = hex("8040f17b 8041f8d3 5501a0b2")
    static let rtpPlain =
        rtpHeader
        + hex("47616c6c 69612065 7374206f 6d6e6973 20646976 69736120 696e2070 61727465 73207472 6573")
    /// Section 16.1.1: the header stays clear (it is the AAD, section 8.2),
    /// then 38 bytes of ciphertext and the 16-byte tag.
    static let rtpProtected =
        rtpHeader
        + hex("f24de3a3 fb34de6c acba861c 9d7e4bca be633bd5 0d294e6f 42a5f47a 51c7d19b 36de3adf 8833")
        + hex("899d7f27 beb16a91 52cf765e e4390cce")  // tag

    /// Section 17: an SR from SSRC 0x4d617273 ("Mars") sent with SRTCP
    /// index 0x5d4, so the IV is 517524055203726f207170bb (section 9.1).
    static let rtcpHeader = hex("81c8000d 4d617273")
    static let rtcpPlain =
        rtcpHeader
        + hex("4e545031 4e545032 52545020 0000042a 0000e930 4c756e61 deadbeef deadbeef deadbeef deadbeef deadbeef")
    static let rtcpIndex = 0x5d4
    /// Section 17.1: header clear, ciphertext, tag, then E=1 and the index
    /// (section 9.1's order, the reverse of RFC 3711 section 3.4's); the
    /// AAD is the header and the E/index word (section 9.2).
    static let rtcpProtected =
        rtcpHeader
        + hex("63e94885 dcdab67c a727d766 2f6b7e99 7ff5c0f7 6c06f32d c676a5f1 730d6fda 4ce09b46 86303ded 0bb9275b")
        + hex("c84aa458 96cf4d2f c5abf872 45d9eade")  // tag
        + hex("800005d4")  // E=1, index 0x5d4

    static func sessionKeys() throws -> SRTPSessionKeys {
        try SRTPSessionKeys(profile: .aeadAES128GCM, rtpKey: key, rtpSalt: salt, rtcpKey: key, rtcpSalt: salt)
    }
}

@Suite struct SRTPRFC7714VectorTests {
    @Test func srtpEncryptionMatchesSection16_1_1() throws {
        var sender = try SRTPSession(profile: .aeadAES128GCM, sessionKeys: RFC7714.sessionKeys(), direction: .outbound)
        #expect(
            inPlace(RFC7714.rtpPlain) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value
                == RFC7714.rtpProtected)
    }

    @Test func srtpDecryptionMatchesSection16_1_2() throws {
        var receiver = try SRTPSession(profile: .aeadAES128GCM, sessionKeys: RFC7714.sessionKeys(), direction: .inbound)
        #expect(
            inPlace(RFC7714.rtpProtected) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.value
                == RFC7714.rtpPlain)
    }

    /// Every byte is covered: the header as AAD, the payload as ciphertext,
    /// and the tag itself. One flipped bit anywhere fails authentication
    /// and leaves the stream's state untouched, so the genuine packet still
    /// decrypts afterwards.
    @Test func srtpRefusesTheSection16VectorWithAnyBitFlipped() throws {
        var receiver = try SRTPSession(profile: .aeadAES128GCM, sessionKeys: RFC7714.sessionKeys(), direction: .inbound)
        // Bit 2 keeps the version at 2 in byte 0 (CC becomes 4, so the
        // header takes 16 payload bytes); in SEQ or SSRC it makes another
        // IV, which fails just the same.
        for offset in 0..<RFC7714.rtpProtected.count {
            var tampered = RFC7714.rtpProtected
            tampered[offset] ^= 0x04
            #expect(
                inPlace(tampered) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.error == .authFailure,
                "byte \(offset)")
        }
        #expect(
            inPlace(RFC7714.rtpProtected) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.value
                == RFC7714.rtpPlain)
    }

    @Test func srtcpEncryptionMatchesSection17_1() throws {
        var sender = try SRTPSession(profile: .aeadAES128GCM, sessionKeys: RFC7714.sessionKeys(), direction: .outbound)
        // Our sender numbers SRTCP from 1 (RFC 3711 section 3.4); the
        // vector's packet is the 0x5d4th.
        for _ in 1..<RFC7714.rtcpIndex {
            _ = try #require(inPlace(RFC7714.rtcpPlain) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value)
        }
        #expect(
            inPlace(RFC7714.rtcpPlain) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value
                == RFC7714.rtcpProtected)
    }

    @Test func srtcpDecryptionMatchesSection17_2() throws {
        var receiver = try SRTPSession(profile: .aeadAES128GCM, sessionKeys: RFC7714.sessionKeys(), direction: .inbound)
        #expect(
            inPlace(RFC7714.rtcpProtected) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.value
                == RFC7714.rtcpPlain)
        // The index word is authenticated (section 9.2's AAD): another index
        // under the same tag fails.
        var otherIndex = RFC7714.rtcpProtected
        otherIndex[otherIndex.count - 1] ^= 0x01
        #expect(
            inPlace(otherIndex) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .authFailure)
    }

    /// The session keys are checked against the profile like master keys,
    /// and a session takes only keys checked for its own profile.
    @Test func sessionKeysOfTheWrongLengthOrProfileAreRefused() throws {
        #expect(throws: SRTPError.badParameter) {
            try SRTPSession(profile: .aesCM128HMACSHA1_80, sessionKeys: RFC7714.sessionKeys(), direction: .inbound)
        }
        #expect(throws: SRTPError.wrongKeyLength(expected: 12, actual: 14)) {
            try SRTPSessionKeys(
                profile: .aeadAES128GCM, rtpKey: RFC7714.key, rtpSalt: RFC7714.salt + [0, 0], rtcpKey: RFC7714.key,
                rtcpSalt: RFC7714.salt)
        }
        #expect(throws: SRTPError.wrongKeyLength(expected: 20, actual: 0)) {
            try SRTPSessionKeys(
                profile: .aesCM128HMACSHA1_80, rtpKey: RFC7714.key, rtpSalt: RFC7714.salt + [0, 0], rtcpKey: RFC7714.key,
                rtcpSalt: RFC7714.salt + [0, 0])
        }
    }
}
