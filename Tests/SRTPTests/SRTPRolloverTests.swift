import SRTP
import Testing
import Wire

/// An OpenSSL and a libsrtp2 session for one direction and key.
private struct BothBackends: ~Copyable {
    var ours: SRTPSession
    var oracle: SRTPSession

    init(
        _ profile: SRTPProfile, _ direction: SRTPSession.Direction, window: Int = SRTPSession.defaultReplayWindow
    ) throws {
        let key = try masterKey(profile, seed: 5)
        let ours = try SRTPSession(
            profile: profile, masterKey: key, direction: direction, replayWindow: window, backend: .openssl)
        let oracle = try SRTPSession(
            profile: profile, masterKey: key, direction: direction, replayWindow: window, backend: .libsrtp2)
        self.ours = ours
        self.oracle = oracle
    }

    /// Protects the packet with sequence number `sequence` on both and
    /// checks they agree.
    mutating func protect(
        _ sequence: UInt16, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Result<
        [UInt8], SRTPError
    > {
        let plain = rtpPacket(sequence: sequence, payloadLength: 40)
        let mine = inPlace(plain) { b, n throws(SRTPError) in try ours.protectRTP(b, length: n) }
        let theirs = inPlace(plain) { b, n throws(SRTPError) in try oracle.protectRTP(b, length: n) }
        #expect(mine == theirs, "seq \(sequence): both backends", sourceLocation: sourceLocation)
        return mine
    }

    /// Unprotects `packet` on both and checks they agree.
    mutating func unprotect(
        _ packet: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) -> Result<
        [UInt8], SRTPError
    > {
        let mine = inPlace(packet) { b, n throws(SRTPError) in try ours.unprotectRTP(b, length: n) }
        let theirs = inPlace(packet) { b, n throws(SRTPError) in try oracle.unprotectRTP(b, length: n) }
        #expect(mine == theirs, "seq \(packet[2]) \(packet[3]): both backends", sourceLocation: sourceLocation)
        return mine
    }
}

/// The rollover counter and index estimate (RFC 3711 section 3.3.1 and
/// appendix A) and the replay window (section 3.3.2) at their edges, on
/// both backends at once: every packet goes to an OpenSSL and a libsrtp2
/// session with the same key, and the two must give the same bytes or the
/// same error.
@Suite struct SRTPRolloverTests {
    static func plain(_ sequence: UInt16) -> [UInt8] { rtpPacket(sequence: sequence, payloadLength: 40) }

    /// Section 3.3.1: when SEQ wraps from 65535 to 0 the ROC counts up, and
    /// the ROC is part of the IV (and for AES-CM of the tag), so packet 0
    /// after the wrap is not packet 0 of ROC 0.
    @Test(arguments: SRTPProfile.allCases)
    func aSequenceWrapIncrementsTheROC(profile: SRTPProfile) throws {
        var sender = try BothBackends(profile, .outbound)
        var receiver = try BothBackends(profile, .inbound)
        for sequence: UInt16 in [65534, 65535, 0, 1] {
            let packet = try #require(sender.protect(sequence).value)
            #expect(receiver.unprotect(packet).value == Self.plain(sequence))
        }
        var firstROC = try BothBackends(profile, .outbound)
        var afterWrap = try BothBackends(profile, .outbound)
        _ = afterWrap.protect(65535)
        let rocZero = try #require(firstROC.protect(0).value)
        let rocOne = try #require(afterWrap.protect(0).value)
        #expect(rocZero[12...] != rocOne[12...], "another ROC, another keystream and tag")
        // A receiver that never saw the wrap reads the packet as ROC 0.
        var late = try BothBackends(profile, .inbound)
        #expect(late.unprotect(rocOne).error == .authFailure)
    }

    /// Appendix A: a packet sent before the wrap and delivered after it
    /// (SEQ far above s_l, which is small) is estimated as ROC - 1 and
    /// decrypts; every packet is accepted once, on either side of the wrap.
    @Test(arguments: SRTPProfile.allCases)
    func aPacketFromBeforeTheWrapArrivingAfterItDecryptsWithTheOldROC(profile: SRTPProfile) throws {
        var sender = try BothBackends(profile, .outbound)
        var receiver = try BothBackends(profile, .inbound)
        let sent: [UInt16] = Array(65500...65535) + Array(0...20)
        var secured: [UInt16: [UInt8]] = [:]
        for sequence in sent { secured[sequence] = try #require(sender.protect(sequence).value) }
        let delivered: [UInt16] = Array(65500...65520) + Array(0...20) + Array(65521...65535)
        for sequence in delivered {
            #expect(receiver.unprotect(secured[sequence]!).value == Self.plain(sequence), "seq \(sequence)")
        }
        for sequence in sent {
            #expect(receiver.unprotect(secured[sequence]!).error == .replayFail, "replayed seq \(sequence)")
        }
        // The sender refuses to protect an index it has used, on either
        // side of the wrap: one index, one packet.
        #expect(sender.protect(65535).error == .replayFail)
        #expect(sender.protect(3).error == .replayFail)
    }

    /// Appendix A's estimate around a jump of 2^15: with s_l < 2^15, a SEQ
    /// more than 2^15 above it is read as ROC - 1 (far behind, so
    /// `replayOld`, not a failed tag); exactly 2^15 above stays in this
    /// ROC. With s_l >= 2^15, a SEQ more than 2^15 below it is read as
    /// ROC + 1.
    @Test(arguments: SRTPProfile.allCases)
    func aJumpOfMoreThanHalfTheSequenceSpaceIsEstimatedAsTheRFCSays(profile: SRTPProfile) throws {
        var sender = try BothBackends(profile, .outbound)
        var receiver = try BothBackends(profile, .inbound)
        // 65000 in ROC 0, then 100: 64900 back is more than 2^15, so ROC 1.
        var secured: [UInt16: [UInt8]] = [:]
        for sequence: UInt16 in [65000, 100] {
            secured[sequence] = try #require(sender.protect(sequence).value)
            #expect(receiver.unprotect(secured[sequence]!).value == Self.plain(sequence))
        }
        // s_l = 100 (ROC 1). 32869 is 2^15 + 1 ahead: estimated ROC 0, so
        // index 32869 lies 32767 behind the highest, outside any window
        // libsrtp allows (64 ..< 32768). A sender in ROC 0 made this packet;
        // read as ROC 1 it would have failed its tag instead.
        var roc0 = try BothBackends(profile, .outbound)
        let stale = try #require(roc0.protect(32869).value)
        #expect(receiver.unprotect(stale).error == .replayOld)
        // The sender estimates the same way (libsrtp's protect does too), so
        // it cannot send that jump either.
        #expect(sender.protect(32869).error == .replayOld)
        // Exactly 2^15 ahead is still ROC 1: sent and accepted.
        #expect(receiver.unprotect(try #require(sender.protect(32868).value)).value == Self.plain(32868))
        // Now s_l = 32868 >= 2^15. 100 is exactly 2^15 below: ROC 1, so the
        // ROC 1 packet 100 again is 32768 behind, too old (read as ROC 2 it
        // would have failed its tag).
        #expect(receiver.unprotect(secured[100]!).error == .replayOld)
        // 99 is more than 2^15 below: ROC 2, a new index, accepted.
        #expect(receiver.unprotect(try #require(sender.protect(99).value)).value == Self.plain(99))
    }

    /// Section 3.3.2: an index up to window - 1 behind the highest is
    /// accepted once, one window or more behind is `replayOld`, across the
    /// wrap. libsrtp2 keeps the window in 32-bit words, so a window that is
    /// not a multiple of 32 is rounded up; ours rounds the same way.
    @Test(arguments: SRTPProfile.allCases, [64, 100, 1024])
    func theReplayWindowIsTheSameOnBothBackends(profile: SRTPProfile, window: Int) throws {
        var sender = try BothBackends(profile, .outbound)
        var receiver = try BothBackends(profile, .inbound, window: window)
        // Indices from ROC 0 SEQ 65006 to ROC 1 SEQ 500 (1030 packets).
        let count = 1030
        let sequences = (0..<count).map { UInt16(truncatingIfNeeded: 65006 + $0) }
        let secured = try sequences.map { try #require(sender.protect($0).value) }
        // The first, so the receiver knows the ROC, then the newest, then
        // the rest newest first.
        #expect(receiver.unprotect(secured[0]).value != nil)
        #expect(receiver.unprotect(secured[count - 1]).value != nil)
        let effective = (window + 31) / 32 * 32
        for distance in 1..<(count - 1) {
            let result = receiver.unprotect(secured[count - 1 - distance])
            if distance < effective {
                #expect(result.value == Self.plain(sequences[count - 1 - distance]), "distance \(distance)")
            } else {
                #expect(result.error == .replayOld, "distance \(distance)")
            }
        }
    }
}
