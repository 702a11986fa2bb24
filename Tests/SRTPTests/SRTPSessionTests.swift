import SRTP
import Testing
import Wire

/// A matched sender/receiver pair on the same master key.
private struct Pair: ~Copyable {
    var sender: SRTPSession
    var receiver: SRTPSession
    init(_ profile: SRTPProfile, backend: SRTPBackend, replayWindow: Int = SRTPSession.defaultReplayWindow) throws {
        let key = try masterKey(profile)
        let sender = try SRTPSession(profile: profile, masterKey: key, direction: .outbound, backend: backend)
        let receiver = try SRTPSession(
            profile: profile, masterKey: key, direction: .inbound,
            replayWindow: replayWindow, backend: backend)
        self.sender = sender
        self.receiver = receiver
    }
    mutating func protect(_ p: [UInt8]) -> Result<[UInt8], SRTPError> {
        inPlace(p) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }
    }
    mutating func unprotect(_ p: [UInt8]) -> Result<[UInt8], SRTPError> {
        inPlace(p) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }
    }
    mutating func protectRTCP(_ p: [UInt8]) -> Result<[UInt8], SRTPError> {
        inPlace(p) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }
    }
    mutating func unprotectRTCP(_ p: [UInt8]) -> Result<[UInt8], SRTPError> {
        inPlace(p) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }
    }
}

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func rtpRoundTripKeepsHeaderInClearAndEncryptsPayload(profile: SRTPProfile, backend: SRTPBackend) throws {
    var pair = try Pair(profile, backend: backend)
    let plain = rtpPacket(sequence: 1000)
    let secured = try #require(pair.protect(plain).value)
    #expect(secured.count == plain.count + profile.rtpTrailerLength)
    #expect(Array(secured[0..<12]) == Array(plain[0..<12]))
    // Every one of 100 payload bytes equal by chance is out of the question;
    // count them to show the payload is really transformed.
    let same = zip(secured[12..<plain.count], plain[12...]).filter { $0 == $1 }.count
    #expect(same < 10)
    #expect(pair.unprotect(secured).value == plain)
}

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func headerExtensionAndCSRCsStayInClear(profile: SRTPProfile, backend: SRTPBackend) throws {
    var pair = try Pair(profile, backend: backend)
    let header: [UInt8] = [
        0x92, 0x60, 0x00, 0x05,  // V=2, X=1, CC=2; PT 96; seq 5
        0x00, 0x00, 0x10, 0x00,  // timestamp
        0xAA, 0xBB, 0xCC, 0xDD,  // SSRC
        0x00, 0x00, 0x00, 0x01,  // CSRC 1
        0x00, 0x00, 0x00, 0x02,  // CSRC 2
        0xBE, 0xDE, 0x00, 0x01,  // one-byte extensions (RFC 8285), 1 word
        0x10, 0x7F, 0x00, 0x00,  // id 1 len 1: 0x7f, padding
    ]
    let plain = header + [UInt8](repeating: 0x42, count: 40)
    let secured = try #require(pair.protect(plain).value)
    #expect(secured.count == plain.count + profile.rtpTrailerLength)
    #expect(Array(secured[0..<header.count]) == header)
    #expect(Array(secured[header.count..<plain.count]) != Array(plain[header.count...]))
    #expect(pair.unprotect(secured).value == plain)
}

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func rtcpRoundTripKeepsFirstEightBytesAndAddsIndex(profile: SRTPProfile, backend: SRTPBackend) throws {
    var pair = try Pair(profile, backend: backend)
    let plain = rtcpPacket()
    var secured: [[UInt8]] = []
    for _ in 0..<2 { secured.append(try #require(pair.protectRTCP(plain).value)) }
    for (i, s) in secured.enumerated() {
        #expect(s.count == plain.count + profile.rtcpTrailerLength)
        #expect(Array(s[0..<8]) == Array(plain[0..<8]))
        #expect(Array(s[8..<plain.count]) != Array(plain[8...]))
        // E flag set, SRTCP index counting from 1 (RFC 3711 section 3.4);
        // placed before the tag for AES-CM, after it for GCM (RFC 7714 9.1).
        let indexAt = profile == .aesCM128HMACSHA1_80 ? plain.count : s.count - 4
        #expect(Array(s[indexAt..<indexAt + 4]) == [0x80, 0x00, 0x00, UInt8(i + 1)])
    }
    #expect(pair.unprotectRTCP(secured[0]).value == plain)
    #expect(pair.unprotectRTCP(secured[1]).value == plain)
}

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func anyTamperedByteFailsAuthentication(profile: SRTPProfile, backend: SRTPBackend) throws {
    var pair = try Pair(profile, backend: backend)
    let secured = try #require(pair.protect(rtpPacket(sequence: 1)).value)
    // Timestamp (header, authenticated only), payload, and the tag itself.
    for position in [5, 12, 60, secured.count - 1] {
        var tampered = secured
        tampered[position] ^= 0x01
        #expect(pair.unprotect(tampered).error == .authFailure, "byte \(position)")
    }
    // The untouched packet still passes: failures left no replay state.
    #expect(pair.unprotect(secured).value == rtpPacket(sequence: 1))

    let securedRTCP = try #require(pair.protectRTCP(rtcpPacket()).value)
    var tampered = securedRTCP
    tampered[10] ^= 0x80
    #expect(pair.unprotectRTCP(tampered).error == .authFailure)
}

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func replayedPacketIsRejected(profile: SRTPProfile, backend: SRTPBackend) throws {
    var pair = try Pair(profile, backend: backend)
    let secured = try #require(pair.protect(rtpPacket(sequence: 42)).value)
    #expect(pair.unprotect(secured).value != nil)
    #expect(pair.unprotect(secured).error == .replayFail)

    let securedRTCP = try #require(pair.protectRTCP(rtcpPacket()).value)
    #expect(pair.unprotectRTCP(securedRTCP).value != nil)
    #expect(pair.unprotectRTCP(securedRTCP).error == .replayFail)
}

@Test(arguments: SRTPBackend.allCases)

func lateRetransmissionInsideTheWindowIsAcceptedOnce(backend: SRTPBackend) throws {
    var pair = try Pair(.aeadAES128GCM, backend: backend)
    var held: [UInt8] = []
    var oldest: [UInt8] = []
    for seq in UInt16(1)...1100 {
        let secured = try #require(pair.protect(rtpPacket(sequence: seq)).value)
        if seq == 100 { held = secured; continue }  // lost, NACKed, re-sent later
        if seq == 50 { oldest = secured }
        #expect(pair.unprotect(secured).value != nil)
    }
    // 1000 packets behind the newest: inside the 1024-packet window.
    #expect(pair.unprotect(held).value == rtpPacket(sequence: 100))
    #expect(pair.unprotect(held).error == .replayFail)
    // 1050 behind: beyond the window.
    #expect(pair.unprotect(oldest).error == .replayOld)
}

@Test(arguments: SRTPBackend.allCases)

func smallerReplayWindowRejectsOlderPackets(backend: SRTPBackend) throws {
    var pair = try Pair(.aesCM128HMACSHA1_80, backend: backend, replayWindow: 64)
    let late = try #require(pair.protect(rtpPacket(sequence: 1)).value)
    for seq in UInt16(2)...101 {
        let secured = try #require(pair.protect(rtpPacket(sequence: seq)).value)
        #expect(pair.unprotect(secured).value != nil)
    }
    #expect(pair.unprotect(late).error == .replayOld)
}

@Test(arguments: SRTPBackend.allCases)

func replayWindowOutsideLibsrtpRangeIsRejected(backend: SRTPBackend) throws {
    for window in [0, 63, 0x8000] {
        #expect(throws: SRTPError.badParameter) {
            _ = try SRTPSession(
                profile: .aeadAES128GCM, masterKey: masterKey(.aeadAES128GCM),
                direction: .inbound, replayWindow: window, backend: backend)
        }
    }
}

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func wrongKeyFailsAuthentication(profile: SRTPProfile, backend: SRTPBackend) throws {
    var sender = try SRTPSession(profile: profile, masterKey: masterKey(profile, seed: 1), direction: .outbound, backend: backend)
    var receiver = try SRTPSession(
        profile: profile, masterKey: masterKey(profile, seed: 2), direction: .inbound, backend: backend)
    let secured = try #require(
        inPlace(rtpPacket(sequence: 3)) { b, n throws(SRTPError) in try sender.protectRTP(b, length: n) }.value)
    #expect(inPlace(secured) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.error == .authFailure)
    let securedRTCP = try #require(inPlace(rtcpPacket()) { b, n throws(SRTPError) in try sender.protectRTCP(b, length: n) }.value)
    #expect(inPlace(securedRTCP) { b, n throws(SRTPError) in try receiver.unprotectRTCP(b, length: n) }.error == .authFailure)
}

@Test(arguments: SRTPBackend.allCases)

func packetFromTheOtherProfileFailsAuthentication(backend: SRTPBackend) throws {
    var cm = try Pair(.aesCM128HMACSHA1_80, backend: backend)
    var gcm = try Pair(.aeadAES128GCM, backend: backend)
    let secured = try #require(cm.protect(rtpPacket(sequence: 3)).value)
    #expect(gcm.unprotect(secured).error == .authFailure)
}

@Test(arguments: SRTPProfile.allCases, SRTPBackend.allCases)
func sequenceNumberWrapCarriesTheRolloverCounter(profile: SRTPProfile, backend: SRTPBackend) throws {
    var pair = try Pair(profile, backend: backend)
    for seq: UInt16 in [65533, 65534, 65535, 0, 1, 2] {
        let plain = rtpPacket(sequence: seq)
        let secured = try #require(pair.protect(plain).value)
        #expect(pair.unprotect(secured).value == plain, "seq \(seq)")
    }
}

@Test(arguments: SRTPBackend.allCases)

func oneSessionCarriesManySSRCsWithSeparateReplayState(backend: SRTPBackend) throws {
    var pair = try Pair(.aeadAES128GCM, backend: backend)
    // The same sequence number on three SSRCs: three independent streams.
    var first: [UInt8] = []
    for ssrc: UInt32 in [1, 2, 0xFFFF_FFFF] {
        let plain = rtpPacket(sequence: 500, ssrc: ssrc)
        let secured = try #require(pair.protect(plain).value)
        if ssrc == 1 { first = secured }
        #expect(pair.unprotect(secured).value == plain)
    }
    // SSRC 1's packet 500 again is a replay on that stream only.
    #expect(pair.unprotect(first).error == .replayFail)
}

/// The OpenSSL backend's per-SSRC table has a hard bound: a new SSRC past
/// it is `tooManyStreams`, known SSRCs keep flowing, and inbound a packet
/// that fails authentication takes no place.
@Test(arguments: SRTPProfile.allCases)
func perSSRCStateStopsAtItsBound(profile: SRTPProfile) throws {
    let key = try masterKey(profile)
    var wide = try SRTPSession(profile: profile, masterKey: key, direction: .outbound)
    var sender = try SRTPSession(profile: profile, masterKey: key, direction: .outbound, maxStreams: 2)
    var receiver = try SRTPSession(profile: profile, masterKey: key, direction: .inbound, maxStreams: 2)
    func protect(_ s: inout SRTPSession, _ seq: UInt16, _ ssrc: UInt32) -> Result<[UInt8], SRTPError> {
        inPlace(rtpPacket(sequence: seq, ssrc: ssrc)) { b, n throws(SRTPError) in try s.protectRTP(b, length: n) }
    }
    #expect(protect(&sender, 1, 10).value != nil)
    #expect(protect(&sender, 1, 11).value != nil)
    #expect(protect(&sender, 1, 12).error == .tooManyStreams)
    #expect(protect(&sender, 2, 10).value != nil)

    var forged = try #require(protect(&wide, 1, 20).value)
    forged[forged.count - 1] ^= 1
    #expect(inPlace(forged) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.error == .authFailure)
    for ssrc: UInt32 in [21, 22] {
        let p = try #require(protect(&wide, 1, ssrc).value)
        #expect(inPlace(p) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.value != nil)
    }
    let third = try #require(protect(&wide, 1, 23).value)
    #expect(inPlace(third) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.error == .tooManyStreams)
    let known = try #require(protect(&wide, 2, 21).value)
    #expect(inPlace(known) { b, n throws(SRTPError) in try receiver.unprotectRTP(b, length: n) }.value != nil)
}
