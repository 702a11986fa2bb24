import Codecs
import RTP
import SFUTesting
import Testing
import Wire

@testable import Forwarding

/// Drives a rewriter with packets of one or more sources on a virtual clock.
struct RewriterHarness {
    var rewriter: StreamRewriter
    var clock = VirtualClock()

    init(initialSequenceNumber: UInt16? = nil, initialTimestamp: UInt32? = nil) {
        rewriter = StreamRewriter(
            outgoingSSRC: SSRC(0xAAAA), clockRate: 90_000, initialSequenceNumber: initialSequenceNumber,
            initialTimestamp: initialTimestamp)
    }

    mutating func send(
        ssrc: UInt32 = 1, seq: UInt16, ts: UInt32, switchPoint: Bool = false, forward: Bool = true, payload: Int = 100
    ) -> ForwardDecision {
        rewriter.rewrite(
            SourcePacket(
                ssrc: SSRC(ssrc), sequenceNumber: seq, timestamp: ts, payloadLength: payload, isSwitchPoint: switchPoint),
            arrival: clock.now, forward: forward)
    }

    /// The (sequence number, timestamp) forwarded, or nil for a drop.
    mutating func out(
        ssrc: UInt32 = 1, seq: UInt16, ts: UInt32, switchPoint: Bool = false, forward: Bool = true
    ) -> (UInt16, UInt32)? {
        guard case .forward(let r) = send(ssrc: ssrc, seq: seq, ts: ts, switchPoint: switchPoint, forward: forward) else {
            return nil
        }
        #expect(r.ssrc == SSRC(0xAAAA))
        return (r.sequenceNumber, r.timestamp)
    }
}

@Test func keepsSequenceContiguousOverSeventyThousandPacketsAcrossWraps() {
    var h = RewriterHarness(initialSequenceNumber: 100, initialTimestamp: 5000)
    var failures = 0
    for i in 0..<70_000 {
        let seq = UInt16(truncatingIfNeeded: 65_000 + i)
        let ts = UInt32(truncatingIfNeeded: 0xFFF0_0000 &+ UInt32(i) * 3000)
        let got = h.out(seq: seq, ts: ts, switchPoint: i == 0)
        let want = (UInt16(truncatingIfNeeded: 100 + i), UInt32(truncatingIfNeeded: 5000 + i * 3000))
        if got?.0 != want.0 || got?.1 != want.1 { failures += 1 }
        h.clock.advance(by: .milliseconds(1))
    }
    #expect(failures == 0)
}

@Test func keepsTheFirstSourcesOwnNumbersWithoutInitialValues() {
    var h = RewriterHarness()
    #expect(h.out(seq: 777, ts: 12_345, switchPoint: true)! == (777, 12_345))
    #expect(h.out(seq: 778, ts: 15_345)! == (778, 15_345))
}

@Test func continuesAfterPublisherRestartWithNewSSRC() {
    var h = RewriterHarness(initialSequenceNumber: 1000, initialTimestamp: 90_000)
    // Source A: 10 frames at 30 fps, one packet each.
    for i in 0..<10 {
        let got = h.out(ssrc: 1, seq: UInt16(4000 + i), ts: UInt32(10_000 + 3000 * i), switchPoint: i == 0)
        #expect(got! == (UInt16(1000 + i), UInt32(90_000 + 3000 * i)))
        h.clock.advance(by: .nanoseconds(33_333_333))
    }
    // Last A packet (ts out 117000) arrived at t0 + 9 * 33.33 ms; the
    // publisher restarts 500 ms after that arrival.
    h.clock.advance(by: .milliseconds(500) - .nanoseconds(33_333_333))
    // A non-keyframe of the new SSRC cannot start it.
    #expect(h.send(ssrc: 2, seq: 61_000, ts: 3_000_000_000) == .drop(.notCurrentSource))
    // The keyframe: seq + 1, timestamp + 0.5 s * 90 kHz.
    #expect(h.out(ssrc: 2, seq: 61_001, ts: 3_000_000_000, switchPoint: true)! == (1010, 117_000 + 45_000))
    #expect(h.rewriter.currentSource == SSRC(2))
    #expect(h.rewriter.sourceSwitches == 2)
    h.clock.advance(by: .milliseconds(33))
    #expect(h.out(ssrc: 2, seq: 61_002, ts: 3_000_003_000)! == (1011, 165_000))
    // A late packet of the old source no longer gets through.
    #expect(h.send(ssrc: 1, seq: 4010, ts: 40_000) == .drop(.notCurrentSource))
    // Nor does a packet of the new source from before the switch.
    #expect(h.send(ssrc: 2, seq: 61_000, ts: 2_999_997_000) == .drop(.beforeSourceSwitch))
    #expect(h.out(ssrc: 2, seq: 61_003, ts: 3_000_006_000)! == (1012, 168_000))
}

@Test func switchAdvancesTimestampByAtLeastOneTick() {
    var h = RewriterHarness(initialSequenceNumber: 0, initialTimestamp: 0)
    _ = h.out(ssrc: 1, seq: 10, ts: 500, switchPoint: true)
    // Same instant: elapsed time 0, so the new source starts one tick on.
    #expect(h.out(ssrc: 2, seq: 90, ts: 1, switchPoint: true)! == (1, 1))
}

@Test func switchTimestampWrapsAt32Bits() {
    var h = RewriterHarness(initialSequenceNumber: 0, initialTimestamp: 0xFFFF_FF00)
    _ = h.out(ssrc: 1, seq: 10, ts: 500, switchPoint: true)
    h.clock.advance(by: .milliseconds(10))  // 900 ticks
    #expect(h.out(ssrc: 2, seq: 90, ts: 42, switchPoint: true)! == (1, 0xFFFF_FF00 &+ 900))
    #expect(h.out(ssrc: 2, seq: 91, ts: 3042)! == (2, 0xFFFF_FF00 &+ 3900))
}

@Test func usesAProvidedTimestampOffsetOnSwitch() {
    var h = RewriterHarness(initialSequenceNumber: 0, initialTimestamp: 1_000)
    _ = h.out(ssrc: 1, seq: 10, ts: 50_000, switchPoint: true)  // ts offset -49000
    h.clock.advance(by: .milliseconds(500))
    // Source 2's timestamps + 40000 are source 1's: 13000 + 40000 = 53000,
    // 3000 after the last frame, whatever the arrival time says.
    h.rewriter.alignNextSource(ssrc: SSRC(2), timestampOffset: 40_000)
    #expect(h.out(ssrc: 2, seq: 7, ts: 13_000, switchPoint: true)! == (1, 4_000))
}

@Test func ignoresAProvidedOffsetThatWouldGoBackwards() {
    var h = RewriterHarness(initialSequenceNumber: 0, initialTimestamp: 1_000)
    _ = h.out(ssrc: 1, seq: 10, ts: 50_000, switchPoint: true)
    h.clock.advance(by: .milliseconds(100))
    h.rewriter.alignNextSource(ssrc: SSRC(2), timestampOffset: 30_000)  // 43000 < 50000
    #expect(h.out(ssrc: 2, seq: 7, ts: 13_000, switchPoint: true)! == (1, 1_000 + 9_000))
}

@Test func droppedAndPaddingOnlyPacketsLeaveNoGaps() {
    var h = RewriterHarness(initialSequenceNumber: 500, initialTimestamp: 0)
    // (seq, forward?, padding-only?, expected)
    let table: [(UInt16, Bool, Bool, ForwardDecision)] = [
        (10, true, false, .forward(RTPRewrite(ssrc: SSRC(0xAAAA), sequenceNumber: 500, timestamp: 0))),
        (11, false, false, .drop(.notForwarded)),
        (12, true, false, .forward(RTPRewrite(ssrc: SSRC(0xAAAA), sequenceNumber: 501, timestamp: 0))),
        (13, true, true, .drop(.paddingOnly)),
        (14, false, false, .drop(.notForwarded)),
        (15, true, false, .forward(RTPRewrite(ssrc: SSRC(0xAAAA), sequenceNumber: 502, timestamp: 0))),
    ]
    for (i, (seq, forward, padding, want)) in table.enumerated() {
        let got = h.rewriter.rewrite(
            SourcePacket(
                ssrc: SSRC(1), sequenceNumber: seq, timestamp: 0, payloadLength: padding ? 0 : 50, isSwitchPoint: i == 0),
            arrival: h.clock.now, forward: forward)
        #expect(got == want, "row \(i)")
    }
    // A switch after trailing drops still continues at last + 1.
    #expect(h.send(ssrc: 1, seq: 16, ts: 0, forward: false) == .drop(.notForwarded))
    #expect(h.out(ssrc: 2, seq: 9000, ts: 0, switchPoint: true)?.0 == 503)
}

@Test func mapsReorderedPacketsConsistentlyWithinTheSource() {
    var h = RewriterHarness(initialSequenceNumber: 100, initialTimestamp: 0)
    // 10 forwarded; 11 lost for now; 12 dropped by the selector; 13
    // forwarded; then 11 arrives late and takes the place it would have had.
    #expect(h.out(seq: 10, ts: 0, switchPoint: true)?.0 == 100)
    #expect(h.out(seq: 12, ts: 0, forward: false) == nil)
    #expect(h.out(seq: 13, ts: 0)?.0 == 102)  // 101 is kept for 11
    #expect(h.out(seq: 11, ts: 0)?.0 == 101)
    #expect(h.out(seq: 14, ts: 0)?.0 == 103)
    // Plain reordering: 16 before 15.
    #expect(h.out(seq: 16, ts: 0)?.0 == 105)
    #expect(h.out(seq: 15, ts: 0)?.0 == 104)
    // A late packet the selector drops leaves its number unused (a hole):
    // the numbers after it are already out.
    #expect(h.out(seq: 18, ts: 0)?.0 == 107)
    #expect(h.out(seq: 17, ts: 0, forward: false) == nil)
    #expect(h.out(seq: 19, ts: 0)?.0 == 108)
}

@Test func mapsLateTimestampsWithTheSourceOffset() {
    var h = RewriterHarness(initialSequenceNumber: 0, initialTimestamp: 1_000_000)
    #expect(h.out(seq: 1, ts: 9000, switchPoint: true)! == (0, 1_000_000))
    #expect(h.out(seq: 3, ts: 15_000)! == (2, 1_006_000))
    #expect(h.out(seq: 2, ts: 12_000)! == (1, 1_003_000))
}

@Test func dropsDuplicates() {
    var h = RewriterHarness()
    _ = h.send(seq: 10, ts: 0, switchPoint: true)
    _ = h.send(seq: 11, ts: 0)
    _ = h.send(seq: 13, ts: 0)
    #expect(h.send(seq: 13, ts: 0) == .drop(.duplicate))  // the highest again
    #expect(h.send(seq: 11, ts: 0) == .drop(.duplicate))  // an older one again
    #expect(h.send(seq: 10, ts: 0, switchPoint: true) == .drop(.duplicate))
    #expect(h.out(seq: 12, ts: 0)?.0 == 12)  // the missing one still fits
    #expect(h.send(seq: 12, ts: 0) == .drop(.duplicate))
    // A dropped packet repeated is a duplicate too.
    #expect(h.send(seq: 14, ts: 0, forward: false) == .drop(.notForwarded))
    #expect(h.send(seq: 14, ts: 0) == .drop(.duplicate))
}

@Test func dropsPacketsTooLateToMap() {
    var h = RewriterHarness()
    _ = h.send(seq: 1000, ts: 0, switchPoint: true)
    _ = h.send(seq: 1300, ts: 0)
    #expect(h.send(seq: 1044, ts: 0) == .drop(.outsideHistory))  // 256 behind
    #expect(h.out(seq: 1045, ts: 0)?.0 == 1045)  // 255 behind still maps
}

@Test func dropsPacketsBeforeTheFirstSource() {
    var h = RewriterHarness()
    #expect(h.send(seq: 1, ts: 0) == .drop(.notCurrentSource))
    #expect(h.send(seq: 2, ts: 0, switchPoint: true, forward: false) == .drop(.notForwarded))
    #expect(h.rewriter.currentSource == nil)
}

@Test func sequenceAndTimestampWrapWithinASource() {
    var h = RewriterHarness(initialSequenceNumber: 65_534, initialTimestamp: 0xFFFF_FFFF - 2999)
    let rows: [(UInt16, UInt32, UInt16, UInt32)] = [
        (7, 0xFFFF_F000, 65_534, 0xFFFF_FFFF - 2999),
        (8, 0xFFFF_F000 &+ 3000, 65_535, 0),
        (9, 0xFFFF_F000 &+ 6000, 0, 3000),
        (10, 0xFFFF_F000 &+ 9000, 1, 6000),
    ]
    for (i, (seq, ts, wantSeq, wantTS)) in rows.enumerated() {
        #expect(h.out(seq: seq, ts: ts, switchPoint: i == 0)! == (wantSeq, wantTS), "row \(i)")
    }
}

@Test func appliesARewriteInPlace() throws {
    var bytes = RTPBuilders.packet(
        payloadType: 96, sequenceNumber: 7, timestamp: 1234, ssrc: 0x0101_0101, marker: true,
        payload: RTPBuilders.vp8Payload(pictureID: 0x1234, tl0PictureIndex: 9, keyframe: true))
    let header = try RTPHeader(parsing: bytes.span.bytes)
    let vp8 = try VP8PayloadDescriptor(parsing: bytes[header.payloadRange].span.bytes)
    let rewrite = RTPRewrite(
        ssrc: SSRC(0xCAFE_F00D), sequenceNumber: 0xBEEF, timestamp: 0x0102_0304, pictureID: 0x7FFF, tl0PictureIndex: 0xAB)
    let ok = bytes.withUnsafeMutableBytes {
        StreamRewriter.apply(rewrite, to: MutableBytes($0), header: header, vp8: vp8)
    }
    #expect(ok)
    let after = try RTPHeader(parsing: bytes.span.bytes)
    #expect(after.ssrc == SSRC(0xCAFE_F00D))
    #expect(after.sequenceNumber == 0xBEEF)
    #expect(after.timestamp == 0x0102_0304)
    #expect(after.marker)
    #expect(after.payloadType == header.payloadType)
    let vp8After = try VP8PayloadDescriptor(parsing: bytes[after.payloadRange].span.bytes)
    #expect(vp8After.pictureID == 0x7FFF)
    #expect(vp8After.tl0PictureIndex == 0xAB)
    #expect(vp8After.isKeyframe)
}

@Test func applyRefusesATruncatedBuffer() throws {
    var bytes: [UInt8] = [0x80, 96, 0, 1, 0, 0]
    let header = try RTPHeader(parsing: RTPBuilders.packet().span.bytes)
    let ok = bytes.withUnsafeMutableBytes {
        RTPRewrite(ssrc: SSRC(1), sequenceNumber: 2, timestamp: 3).apply(to: MutableBytes($0), header: header)
    }
    #expect(!ok)
    #expect(bytes == [0x80, 96, 0, 1, 0, 0])
}

@Test func restartsTheSourceWhenTheSameSSRCJumpsFarBackOnAKeyframe() {
    var h = RewriterHarness(initialSequenceNumber: 10, initialTimestamp: 0)
    _ = h.out(seq: 40_000, ts: 900_000, switchPoint: true)
    _ = h.out(seq: 40_001, ts: 903_000)
    h.clock.advance(by: .milliseconds(100))
    // 30,000 behind (or 35,536 ahead): only a keyframe starts over.
    #expect(h.send(seq: 10_000, ts: 5) == .drop(.outsideHistory))
    #expect(h.out(seq: 10_001, ts: 5, switchPoint: true)! == (12, 3000 + 9000))
    #expect(h.out(seq: 10_002, ts: 3005)! == (13, 15_000))
    #expect(h.rewriter.sourceSwitches == 2)
    // The packet before the restart point stays dropped.
    #expect(h.send(seq: 10_000, ts: 5) == .drop(.beforeSourceSwitch))
}
