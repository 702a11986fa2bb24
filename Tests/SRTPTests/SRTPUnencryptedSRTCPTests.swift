import CShim
import SRTP
import Testing
import Wire

// SRTCP with the E flag clear (RFC 3711 section 3.4): the sender left the
// compound unencrypted but it is still authenticated. Neither backend ever
// sends one; inbound, ours does what libsrtp2 2.5 does: AES-GCM verifies
// it with the whole packet as AAD (RFC 7714 section 9.3) and accepts it,
// AES-CM refuses it (`badParameter`, libsrtp's `cant_check`) before the
// tag is looked at. The packets are built here from the derived session
// keys with OpenSSL directly (the CShim primitives, not the engine's
// packet code), so each backend meets a packet it did not make.

/// RFC 7714 section 17.3: the section 17 SR tagged, not encrypted. The
/// tag covers header, body and the E=0 index word (section 9.3).
private let rfc7714TaggedOnly =
    hex("81c8000d 4d617273")
    + hex("4e545031 4e545032 52545020 0000042a 0000e930 4c756e61 deadbeef deadbeef deadbeef deadbeef deadbeef")
    + hex("841dd968 3dd78ec9 2ae58790 125f62b3")  // tag
    + hex("000005d4")  // E=0, index 0x5d4

/// `rtcp || tag || (E=0, index)` for AEAD_AES_128_GCM, or
/// `rtcp || (E=0, index) || HMAC-SHA1-80` for AES-CM, under the session
/// keys `masterKey` derives.
private func unencryptedSRTCP(
    _ rtcp: [UInt8], index: UInt32, profile: SRTPProfile, masterKey: SRTPMasterKey
) throws
    -> [UInt8]
{
    let keys = try SRTPSessionKeys(deriving: masterKey, profile: profile)
    let word: [UInt8] = [UInt8(index >> 24 & 0x7F), UInt8(index >> 16 & 0xFF), UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)]
    let gcm = profile == .aeadAES128GCM
    let cipher = try #require(swiftlet_srtp_cipher_new(gcm ? 1 : 0, 1, keys.rtcpKey, keys.rtcpAuthKey, keys.rtcpAuthKey.count))
    defer { swiftlet_srtp_cipher_free(cipher) }
    if gcm {
        // RFC 7714 section 9.1: IV = (00 00 || SSRC || 00 00 || index) XOR salt.
        var iv = [0, 0] + Array(rtcp[4..<8]) + [0, 0] + word
        for i in iv.indices { iv[i] ^= keys.rtcpSalt[i] }
        var tag = [UInt8](repeating: 0, count: 16)
        var none: UInt8 = 0
        #expect(swiftlet_srtp_gcm_seal(cipher, iv, rtcp, rtcp.count, word, 4, &none, 0, &tag) == 1)
        return rtcp + tag + word
    }
    var digest = [UInt8](repeating: 0, count: 20)
    let authenticated = rtcp + word
    swiftlet_srtp_hmac_sha1(cipher, authenticated, authenticated.count, nil, 0, &digest)
    return authenticated + digest[0..<10]
}

@Suite struct SRTPUnencryptedSRTCPTests {
    @Test func rfc7714TaggedOnlyPacketVerifiesAsSection17_4() throws {
        let key = hex("000102030405060708090a0b0c0d0e0f"), salt = hex("517569642070726f2071756f")
        let keys = try SRTPSessionKeys(profile: .aeadAES128GCM, rtpKey: key, rtpSalt: salt, rtcpKey: key, rtcpSalt: salt)
        var receiver = try SRTPSession(profile: .aeadAES128GCM, sessionKeys: keys, direction: .inbound)
        var tampered = rfc7714TaggedOnly
        tampered[12] ^= 0x01  // the body is authenticated, not encrypted
        #expect(inPlace(tampered) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .authFailure)
        var encryptedFlag = rfc7714TaggedOnly
        encryptedFlag[encryptedFlag.count - 4] |= 0x80  // E is in the AAD: setting it breaks the tag
        #expect(
            inPlace(encryptedFlag) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .authFailure)
        #expect(
            inPlace(rfc7714TaggedOnly) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.value
                == Array(rfc7714TaggedOnly.dropLast(20)))
        #expect(
            inPlace(rfc7714TaggedOnly) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error
                == .replayFail)
    }

    /// AES-GCM: both backends accept a genuine unencrypted packet once,
    /// return it unchanged without its trailer, and refuse a tampered one.
    @Test(arguments: SRTPBackend.allCases)
    func aesGCMAcceptsAuthenticatedUnencryptedSRTCPLikeLibsrtp(backend: SRTPBackend) throws {
        let key = try masterKey(.aeadAES128GCM, seed: 3)
        var receiver = try SRTPSession(profile: .aeadAES128GCM, masterKey: key, direction: .inbound, backend: backend)
        let rtcp = rtcpPacket()
        let packet = try unencryptedSRTCP(rtcp, index: 7, profile: .aeadAES128GCM, masterKey: key)
        var tampered = packet
        tampered[20] ^= 0x40
        #expect(inPlace(tampered) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .authFailure)
        #expect(inPlace(packet) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.value == rtcp)
        #expect(inPlace(packet) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .replayFail)
        // Encrypted SRTCP from the same stream still works alongside.
        var sender = try SRTPSession(profile: .aeadAES128GCM, masterKey: key, direction: .outbound, backend: backend)
        let encrypted = try #require(inPlace(rtcp) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value)
        #expect(inPlace(encrypted) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.value == rtcp)
    }

    /// AES-CM: both backends refuse the packet whatever its tag and index,
    /// with the same typed error.
    @Test(arguments: SRTPBackend.allCases)
    func aesCMRefusesUnencryptedSRTCPLikeLibsrtp(backend: SRTPBackend) throws {
        let key = try masterKey(.aesCM128HMACSHA1_80, seed: 3)
        var receiver = try SRTPSession(profile: .aesCM128HMACSHA1_80, masterKey: key, direction: .inbound, backend: backend)
        let rtcp = rtcpPacket()
        let packet = try unencryptedSRTCP(rtcp, index: 7, profile: .aesCM128HMACSHA1_80, masterKey: key)
        var badTag = packet
        badTag[badTag.count - 1] ^= 0x01
        #expect(inPlace(packet) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .badParameter)
        #expect(inPlace(badTag) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .badParameter)
        // Refused before the replay check too: an index already accepted
        // encrypted is still `badParameter` when it comes back with E clear.
        var sender = try SRTPSession(profile: .aesCM128HMACSHA1_80, masterKey: key, direction: .outbound, backend: backend)
        let encrypted = try #require(inPlace(rtcp) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value)
        #expect(inPlace(encrypted) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.value == rtcp)
        let sameIndex = try unencryptedSRTCP(rtcp, index: 1, profile: .aesCM128HMACSHA1_80, masterKey: key)
        #expect(inPlace(sameIndex) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .badParameter)
    }
}
