import SRTP
import Testing
import Wire

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func tooShortSRTPIsATypedError(profile: SRTPProfile, backend: SRTPBackend) throws {
    var receiver = try SRTPSession(profile: profile, masterKey: masterKey(profile), direction: .inbound, backend: backend)
    func unprotect(_ p: [UInt8]) -> SRTPError? {
        inPlace(p) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.error
    }
    #expect(unprotect([]) == .truncated)
    #expect(unprotect([0x80]) == .truncated)
    #expect(unprotect(Array(rtpPacket(sequence: 1)[0..<11])) == .truncated)
    // A full header but less than a tag after it.
    #expect(unprotect(rtpPacket(sequence: 1, payloadLength: profile.rtpTrailerLength - 1)) == .truncated)
    // CC=15 claims 60 bytes of CSRCs that are not there.
    var manyCSRCs = rtpPacket(sequence: 1, payloadLength: 20)
    manyCSRCs[0] = 0x8F
    #expect(unprotect(manyCSRCs) == .truncated)
    // X=1 with an extension length of 0xffff words.
    var longExtension = rtpPacket(sequence: 1, payloadLength: 20)
    longExtension[0] = 0x90
    longExtension[14] = 0xFF; longExtension[15] = 0xFF
    #expect(unprotect(longExtension) == .truncated)
    // X=1 with the extension header itself cut off.
    var cutExtension = rtpPacket(sequence: 1, payloadLength: 2)
    cutExtension[0] = 0x90
    #expect(unprotect(cutExtension) == .truncated)
    // Version 0 and 3 are not RTP (RFC 3550 section 5.1).
    var version0 = rtpPacket(sequence: 1); version0[0] = 0x00
    var version3 = rtpPacket(sequence: 1); version3[0] = 0xC0
    #expect(unprotect(version0) == .badParameter)
    #expect(unprotect(version3) == .badParameter)
}

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func tooShortSRTCPIsATypedError(profile: SRTPProfile, backend: SRTPBackend) throws {
    var receiver = try SRTPSession(profile: profile, masterKey: masterKey(profile), direction: .inbound, backend: backend)
    func unprotect(_ p: [UInt8]) -> SRTPError? {
        inPlace(p) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error
    }
    #expect(unprotect([]) == .truncated)
    #expect(unprotect([0x80, 201, 0, 1]) == .truncated)
    // Header but no room for index and tag.
    #expect(unprotect(rtcpPacket()[0..<8] + [UInt8](repeating: 0, count: profile.rtcpTrailerLength - 1)) == .truncated)
    var version1 = rtcpPacket(); version1[0] = 0x40
    #expect(unprotect(version1 + [UInt8](repeating: 0, count: 20)) == .badParameter)
}

@Test(arguments: SRTPBackend.allCases)

func protectRefusesABufferWithoutRoomForTheTrailer(backend: SRTPBackend) throws {
    var sender = try SRTPSession(
        profile: .aeadAES128GCM, masterKey: masterKey(.aeadAES128GCM), direction: .outbound, backend: backend)
    let plain = rtpPacket(sequence: 1)
    #expect(
        inPlace(plain, room: SRTPSession.rtpTrailerRoom - 1) { b, n throws(SRTPError) in
            try sender.protectRTP(b, length: n)
        }.error == .bufferTooSmall)
    #expect(
        inPlace(plain, room: SRTPSession.rtpTrailerRoom) { b, n throws(SRTPError) in
            try sender.protectRTP(b, length: n)
        }.value?.count == plain.count + 16)
    #expect(
        inPlace(rtcpPacket(), room: SRTPSession.rtcpTrailerRoom - 1) { b, n throws(SRTPError) in
            try sender.protectRTCP(b, length: n)
        }.error == .bufferTooSmall)
    // Our own malformed packets are refused before libsrtp sees them too.
    #expect(inPlace([0x80, 96, 0, 1, 0]) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.error == .truncated)
    #expect(inPlace([0x80, 200, 0]) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.error == .truncated)
    // A length beyond the buffer, or negative, is refused the same way.
    #expect(
        inPlace(plain, room: 200) { b, n throws(SRTPError) in try sender.protectRTP(b, length: b.count + 1) }.error
            == .bufferTooSmall)
    #expect(inPlace(plain, room: 200) { b, n throws(SRTPError) in try sender.protectRTP(b, length: -1) }.error == .bufferTooSmall)
}

@Test(arguments: SRTPBackend.allCases)

func sessionRefusesTheOtherDirection(backend: SRTPBackend) throws {
    var inbound = try SRTPSession(
        profile: .aesCM128HMACSHA1_80, masterKey: masterKey(.aesCM128HMACSHA1_80), direction: .inbound, backend: backend)
    var outbound = try SRTPSession(
        profile: .aesCM128HMACSHA1_80, masterKey: masterKey(.aesCM128HMACSHA1_80), direction: .outbound, backend: backend)
    let plain = rtpPacket(sequence: 1)
    #expect(inPlace(plain) { b, n throws(SRTPError) in try inbound.protectRTP(b, length: n) }.error == .wrongDirection)
    #expect(inPlace(plain) { b, n throws(SRTPError) in try outbound.unprotectRTP(b, length: n) }.error == .wrongDirection)
    #expect(inPlace(rtcpPacket()) { b, n throws(SRTPError) in try inbound.protectRTCP(b, length: n) }.error == .wrongDirection)
    #expect(inPlace(rtcpPacket()) { b, n throws(SRTPError) in try outbound.unprotectRTCP(b, length: n) }.error == .wrongDirection)
}

/// Deterministic xorshift64 so garbage is the same on every run.
private struct XorShift {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
}

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func garbageNeverUnprotectsAndNeverTraps(profile: SRTPProfile, backend: SRTPBackend) throws {
    var receiver = try SRTPSession(profile: profile, masterKey: masterKey(profile), direction: .inbound, backend: backend)
    var sender = try SRTPSession(profile: profile, masterKey: masterKey(profile), direction: .outbound, backend: backend)
    var rng = XorShift(state: 0x9E37_79B9_7F4A_7C15)
    let valid = try #require(
        inPlace(rtpPacket(sequence: 77)) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value)
    let validRTCP = try #require(inPlace(rtcpPacket()) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value)
    let expected: Set<SRTPError> = [.truncated, .badParameter, .authFailure]
    for round in 0..<3000 {
        var packet: [UInt8]
        switch round % 3 {
        case 0:  // random bytes, random length up to 300, forced to version 2 half the time
            packet = (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if round % 2 == 0, !packet.isEmpty { packet[0] = packet[0] & 0x3F | 0x80 }
        case 1:  // a valid SRTP packet with a few bytes changed or cut
            packet = valid
            for _ in 0..<1 + Int(rng.next() % 3) {
                packet[Int(rng.next() % UInt64(packet.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            }
            if rng.next() % 2 == 0 { packet = Array(packet.prefix(Int(rng.next() % UInt64(packet.count)))) }
        default:  // a valid SRTCP packet mutated the same way
            packet = validRTCP
            packet[Int(rng.next() % UInt64(packet.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            if rng.next() % 2 == 0 { packet = Array(packet.prefix(Int(rng.next() % UInt64(packet.count)))) }
        }
        let rtp = inPlace(packet) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }
        let rtcp = inPlace(packet) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }
        #expect(rtp.error.map { expected.contains($0) } == true, "round \(round): \(rtp)")
        #expect(rtcp.error.map { expected.contains($0) } == true, "round \(round): \(rtcp)")
    }
}
