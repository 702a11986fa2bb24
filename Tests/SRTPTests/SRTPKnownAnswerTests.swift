import SRTP
import Testing

// Reference packets from libsrtp's own test driver (test/srtp_driver.c,
// srtp_validate and srtp_validate_gcm), made by an independent build of the
// library: matching them shows our key||salt wiring and profile choice give
// the same bytes on the wire as other implementations. Key derivation does
// not depend on the SSRC, so our wildcard-SSRC sessions give the same bytes
// as the driver's ssrc_specific ones.

/// RTP header: V=2, PT=15, seq 0x1234, timestamp 0xdecafbad, SSRC 0xcafebabe.
private let rtpHeader = hex("800f1234 decafbad cafebabe")
/// RTCP header: V=2, RC=1, PT=200 (SR), length 11, SSRC 0xcafebabe.
private let rtcpHeader = hex("81c8000b cafebabe")
private let payload = [UInt8](repeating: 0xab, count: 16)

private enum CM80 {
    static let key = hex("e1f97a0d3e018be0d64fa32c06de4139")
    static let salt = hex("0ec675ad498afeebb6960b3aabe6")
    static let srtp =
        rtpHeader
        + hex("4e55dc4ce79978d88ca4d215949d2402")  // encrypted payload
        + hex("b78d6acc99ea179b8dbb")  // HMAC-SHA1-80 tag
    static let srtcp =
        rtcpHeader
        + hex("7128035be487b9bdbef89041f977a5a8")  // encrypted payload
        + hex("80000001")  // E=1, SRTCP index 1
        + hex("993e08cd54d6c1230798")  // HMAC-SHA1-80 tag
}

private enum GCM {
    static let key = hex("000102030405060708090a0b0c0d0e0f")
    static let salt = hex("a0a1a2a3a4a5a6a7a8a9aaab")
    static let srtp =
        rtpHeader
        + hex("c5002ede04cfdd2eb91159e0880aa06e")  // encrypted payload
        + hex("d2976826f796b201df3131a127e8a392")  // GCM tag
    static let srtcp =
        rtcpHeader
        + hex("c98b8b5df0392a55852b6c21ac8e7025")  // encrypted payload
        + hex("c52c6fbea2b3b446ea31123ba88ce61e")  // GCM tag
        + hex("80000001")  // E=1, SRTCP index 1 (RFC 7714 section 9.1: after the tag)
}

@Test(arguments: SRTPBackend.allCases)
func aesCM128HMACSHA1_80ProtectMatchesLibsrtpReferencePackets(backend: SRTPBackend) throws {
    let key = try SRTPMasterKey(key: CM80.key, salt: CM80.salt, profile: .aesCM128HMACSHA1_80)
    var sender = try SRTPSession(profile: .aesCM128HMACSHA1_80, masterKey: key, direction: .outbound, backend: backend)
    #expect(inPlace(rtpHeader + payload) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value == CM80.srtp)
    #expect(inPlace(rtcpHeader + payload) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value == CM80.srtcp)
}

@Test(arguments: SRTPBackend.allCases)
func aesCM128HMACSHA1_80UnprotectsLibsrtpReferencePackets(backend: SRTPBackend) throws {
    let key = try SRTPMasterKey(key: CM80.key, salt: CM80.salt, profile: .aesCM128HMACSHA1_80)
    var receiver = try SRTPSession(profile: .aesCM128HMACSHA1_80, masterKey: key, direction: .inbound, backend: backend)
    #expect(inPlace(CM80.srtp) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.value == rtpHeader + payload)
    #expect(
        inPlace(CM80.srtcp) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.value == rtcpHeader + payload)
}

@Test(arguments: SRTPBackend.allCases)
func aeadAES128GCMProtectMatchesLibsrtpReferencePackets(backend: SRTPBackend) throws {
    let key = try SRTPMasterKey(key: GCM.key, salt: GCM.salt, profile: .aeadAES128GCM)
    var sender = try SRTPSession(profile: .aeadAES128GCM, masterKey: key, direction: .outbound, backend: backend)
    #expect(inPlace(rtpHeader + payload) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value == GCM.srtp)
    #expect(inPlace(rtcpHeader + payload) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value == GCM.srtcp)
}

@Test(arguments: SRTPBackend.allCases)
func aeadAES128GCMUnprotectsLibsrtpReferencePackets(backend: SRTPBackend) throws {
    let key = try SRTPMasterKey(key: GCM.key, salt: GCM.salt, profile: .aeadAES128GCM)
    var receiver = try SRTPSession(profile: .aeadAES128GCM, masterKey: key, direction: .inbound, backend: backend)
    #expect(inPlace(GCM.srtp) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.value == rtpHeader + payload)
    #expect(
        inPlace(GCM.srtcp) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.value == rtcpHeader + payload)
}
