import RTCP
import SFUTesting
import Testing
import Wire

@testable import RTPStreams

private func block(_ s: inout ReceptionStatistics, now: Instant) throws -> ReceptionReport {
    let report = s.makeReportBlock(now: now)
    return try #require(report)
}

private func stats() -> ReceptionStatistics { ReceptionStatistics(ssrc: SSRC(0x55), clockRate: 90_000) }

@Test func computesLossFractionAndCumulativeLossPerInterval() throws {
    var s = stats()
    let t = Instant.zero
    // Interval 1: 1 ... 10 without 3 and 7. Expected 10, received 8:
    // fraction (2 << 8) / 10 = 51, cumulative 2.
    for seq: UInt16 in [1, 2, 4, 5, 6, 8, 9, 10] { s.record(sequenceNumber: seq, timestamp: 0, arrival: t) }
    let first = try block(&s, now: t)
    #expect(
        first
            == ReceptionReport(
                ssrc: SSRC(0x55), fractionLost: 51, cumulativeLost: 2, extendedHighestSequenceNumber: 10, jitter: 0))
    // Interval 2: 11 ... 20, a duplicate of 20, and 7 arriving 13 late
    // (within MAX_MISORDER, so it counts).
    for seq: UInt16 in 11...20 { s.record(sequenceNumber: seq, timestamp: 0, arrival: t) }
    #expect(s.record(sequenceNumber: 20, timestamp: 0, arrival: t) == .duplicate)
    #expect(s.record(sequenceNumber: 7, timestamp: 0, arrival: t) == .reordered)
    // Expected 10 more, received 12: no loss in the interval; cumulative
    // 20 - 20 = 0.
    let second = try block(&s, now: t)
    #expect(second.fractionLost == 0)
    #expect(second.cumulativeLost == 0)
    #expect(second.extendedHighestSequenceNumber == 20)
    // Interval 3: 21 ... 24 with 22 and 23 lost: (2 << 8) / 4 = 128.
    s.record(sequenceNumber: 21, timestamp: 0, arrival: t)
    s.record(sequenceNumber: 24, timestamp: 0, arrival: t)
    let third = try block(&s, now: t)
    #expect(third.fractionLost == 128)
    #expect(third.cumulativeLost == 2)
    #expect(s.duplicates == 1)
    #expect(s.reordered == 1)
}

@Test func duplicatesMakeCumulativeLossNegative() throws {
    var s = stats()
    for seq: UInt16 in [1, 2, 3, 3, 2, 3] { s.record(sequenceNumber: seq, timestamp: 0, arrival: .zero) }
    #expect(s.duplicates == 3)
    #expect(s.cumulativeLost == -3)  // expected 3, received 6 (RFC 3550 A.3)
    #expect(try block(&s, now: .zero).cumulativeLost == -3)
}

@Test func extendsTheHighestSequenceNumberAcrossAWrap() {
    var s = stats()
    for i in 0..<20 { s.record(sequenceNumber: UInt16(truncatingIfNeeded: 65_530 + i), timestamp: 0, arrival: .zero) }
    #expect(s.extendedHighestSequenceNumber == 65_549)  // one cycle: 65536 + 13
    #expect(s.expected == 20)
    #expect(s.cumulativeLost == 0)
}

@Test func countsAPacketReorderedBeforeTheFirstAsExpected() {
    var s = stats()
    s.record(sequenceNumber: 2, timestamp: 0, arrival: .zero)
    #expect(s.record(sequenceNumber: 0, timestamp: 0, arrival: .zero) == .reordered)
    #expect(s.expected == 3)
    #expect(s.cumulativeLost == 1)  // 1 is missing
    #expect(s.extendedHighestSequenceNumber == 2)
}

@Test func restartsOnlyAfterTwoSequentialPacketsOfAJump() {
    var s = stats()
    for seq: UInt16 in 100...110 { s.record(sequenceNumber: seq, timestamp: 0, arrival: .zero) }
    #expect(s.record(sequenceNumber: 40_000, timestamp: 0, arrival: .zero) == .outOfRange)
    #expect(s.record(sequenceNumber: 111, timestamp: 0, arrival: .zero) == .inOrder)
    #expect(s.record(sequenceNumber: 40_005, timestamp: 0, arrival: .zero) == .outOfRange)
    #expect(s.record(sequenceNumber: 40_006, timestamp: 0, arrival: .zero) == .restarted)
    #expect(s.restarts == 1)
    #expect(s.outOfRange == 2)
    #expect(s.packetsReceived == 1)
    #expect(s.record(sequenceNumber: 40_007, timestamp: 0, arrival: .zero) == .inOrder)
    #expect(s.expected == 2)
    #expect(s.extendedHighestSequenceNumber == 40_007)
    // Too far behind (more than MAX_MISORDER) is not a late packet.
    #expect(s.record(sequenceNumber: 40_007 - 101, timestamp: 0, arrival: .zero) == .outOfRange)
    #expect(s.record(sequenceNumber: 40_007 - 100, timestamp: 0, arrival: .zero) == .reordered)
}

@Test func clampsCumulativeLossTo24BitsInTheReport() throws {
    var s = stats()
    var seq: UInt16 = 0
    s.record(sequenceNumber: seq, timestamp: 0, arrival: .zero)
    // 2,800 jumps of 2,999 lose 2,998 each: 8,394,400 > 2^23 - 1.
    for _ in 0..<2800 {
        seq &+= 2999
        s.record(sequenceNumber: seq, timestamp: 0, arrival: .zero)
    }
    #expect(s.cumulativeLost == 8_394_400)
    let report = try block(&s, now: .zero)
    #expect(report.cumulativeLost == 8_388_607)
    #expect(report.fractionLost == UInt8((UInt64(8_394_400) << 8) / 8_397_201))
}

@Test func jitterFollowsAppendixA8() {
    var s = stats()
    // Packets every 20 ms (1800 ticks); odd ones arrive 10 ms (900 ticks)
    // late, so |D| = 900 each time. Integer form: J16 += |D| - (J16 + 8) / 16.
    //   J16: 900 -> 1744 -> 2535, reported J16 / 16: 56, 109, 158
    //   (the real-valued J is 56.25, 108.98, 158.42).
    let t0 = Instant(nanoseconds: 7_000_000_000)
    var reported: [UInt32] = []
    for i in 0..<4 {
        let arrival = t0 + .milliseconds(20 * i + (i % 2 == 1 ? 10 : 0))
        s.record(sequenceNumber: UInt16(i), timestamp: 1_000_000 &+ UInt32(1800 * i), arrival: arrival)
        reported.append(s.jitter)
    }
    #expect(reported == [0, 56, 109, 158])
    // It converges on |D|.
    for i in 4..<400 {
        let arrival = t0 + .milliseconds(20 * i + (i % 2 == 1 ? 10 : 0))
        s.record(sequenceNumber: UInt16(i), timestamp: 1_000_000 &+ UInt32(1800 * i), arrival: arrival)
    }
    #expect((899...900).contains(s.jitter))
}

@Test func constantTransitGivesZeroJitterAcrossATimestampWrap() {
    var s = ReceptionStatistics(ssrc: SSRC(1), clockRate: 48_000)
    for i in 0..<100 {
        s.record(
            sequenceNumber: UInt16(i), timestamp: 0xFFFF_F000 &+ UInt32(960 * i),
            arrival: Instant(nanoseconds: Int64(i) * 20_000_000))
    }
    #expect(s.jitter == 0)
}

@Test func lateAndDuplicatePacketsDoNotMoveJitter() {
    var s = stats()
    s.record(sequenceNumber: 1, timestamp: 0, arrival: .zero)
    s.record(sequenceNumber: 3, timestamp: 3600, arrival: Instant(nanoseconds: 40_000_000))
    s.record(sequenceNumber: 2, timestamp: 1800, arrival: Instant(nanoseconds: 900_000_000))
    s.record(sequenceNumber: 3, timestamp: 3600, arrival: Instant(nanoseconds: 950_000_000))
    #expect(s.jitter == 0)
}

@Test func echoesLSRAndDLSRFromTheLastSenderReport() throws {
    var s = stats()
    let t = Instant(nanoseconds: 3_000_000_000)
    s.record(sequenceNumber: 1, timestamp: 0, arrival: t)
    #expect(try block(&s, now: t).lastSenderReport == 0)
    let info = SenderInfo(ntpTimestamp: 0xE1B2_C3D4_8000_0000, rtpTimestamp: 0, packetCount: 1, octetCount: 1)
    s.recordSenderReport(info, arrival: t)
    // 1.5 s later: DLSR = 1.5 * 65536 = 98304; LSR = middle 32 bits.
    let report = try block(&s, now: t + .milliseconds(1500))
    #expect(report.lastSenderReport == 0xC3D4_8000)
    #expect(report.delaySinceLastSenderReport == 98_304)
    // 1 ms is 65.536 units: rounded down.
    #expect(try block(&s, now: t + .milliseconds(1)).delaySinceLastSenderReport == 65)
}

@Test func reportsNothingBeforeTheFirstPacket() {
    var s = stats()
    #expect(s.makeReportBlock(now: .zero) == nil)
    #expect(!s.hasReceived)
}
