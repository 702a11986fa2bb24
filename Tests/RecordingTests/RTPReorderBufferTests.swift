import Recording
import Testing
import Wire

/// Packets `[seq]` of 4 bytes; the buffer's releases as the first bytes'
/// numbers, with the skips before each.
private func packet(_ n: UInt16) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 0xFF), 0, 0] }

private func insert(
    _ buffer: RTPReorderBuffer, _ n: UInt16, at ms: Int64, into out: inout [(UInt16, Int)]
) -> RTPReorderBuffer.Insertion {
    var released: [(UInt16, Int)] = []
    let r = packet(n).withUnsafeBytes { raw in
        buffer.insert(sequenceNumber: n, packet: raw, now: Instant(nanoseconds: ms * 1_000_000)) { p, skipped in
            released.append((UInt16(p[0]) << 8 | UInt16(p[1]), skipped))
        }
    }
    out += released
    return r
}

private func drain(_ buffer: RTPReorderBuffer, at ms: Int64, into out: inout [(UInt16, Int)]) {
    buffer.drain(now: Instant(nanoseconds: ms * 1_000_000)) { p, skipped in
        out.append((UInt16(p[0]) << 8 | UInt16(p[1]), skipped))
    }
}

@Test func releasesInOrderPacketsAtOnce() {
    let b = RTPReorderBuffer(capacity: 16, packetBytes: 8, repairWait: .milliseconds(400))
    var out: [(UInt16, Int)] = []
    for n: UInt16 in 100...103 {
        #expect(insert(b, n, at: 0, into: &out) == .stored)
        drain(b, at: 0, into: &out)
    }
    #expect(out.map(\.0) == [100, 101, 102, 103])
    #expect(out.allSatisfy { $0.1 == 0 })
    #expect(b.repairDeadline == nil)
}

@Test func aRepairWithinTheWaitFillsTheGapInOrder() {
    let b = RTPReorderBuffer(capacity: 16, packetBytes: 8, repairWait: .milliseconds(400))
    var out: [(UInt16, Int)] = []
    _ = insert(b, 1, at: 0, into: &out)
    drain(b, at: 0, into: &out)
    _ = insert(b, 3, at: 10, into: &out)
    _ = insert(b, 4, at: 20, into: &out)
    drain(b, at: 20, into: &out)
    #expect(out.map(\.0) == [1])
    #expect(b.repairDeadline == Instant(nanoseconds: 420_000_000))
    // The retransmission of 2 arrives 300 ms later.
    _ = insert(b, 2, at: 320, into: &out)
    drain(b, at: 320, into: &out)
    #expect(out.map(\.0) == [1, 2, 3, 4])
    #expect(b.statistics.skipped == 0)
}

@Test func aPacketNotRepairedInTimeIsSkippedAndCounted() {
    let b = RTPReorderBuffer(capacity: 16, packetBytes: 8, repairWait: .milliseconds(400))
    var out: [(UInt16, Int)] = []
    _ = insert(b, 1, at: 0, into: &out)
    drain(b, at: 0, into: &out)
    _ = insert(b, 3, at: 10, into: &out)
    drain(b, at: 10, into: &out)
    drain(b, at: 409, into: &out)
    #expect(out.map(\.0) == [1])
    drain(b, at: 410, into: &out)
    #expect(out.map(\.0) == [1, 3])
    #expect(out.last?.1 == 1)
    #expect(b.statistics.skipped == 1)
    // 2 arriving now is too late: its number was given up.
    #expect(insert(b, 2, at: 500, into: &out) == .late)
    #expect(b.statistics.late == 1)
}

@Test func duplicatesAndOversizedPacketsAreRefused() {
    let b = RTPReorderBuffer(capacity: 16, packetBytes: 4, repairWait: .milliseconds(400))
    var out: [(UInt16, Int)] = []
    _ = insert(b, 1, at: 0, into: &out)
    _ = insert(b, 3, at: 0, into: &out)
    #expect(insert(b, 3, at: 0, into: &out) == .duplicate)
    let big = [UInt8](repeating: 0, count: 5)
    let r = big.withUnsafeBytes { b.insert(sequenceNumber: 4, packet: $0, now: .zero) { _, _ in } }
    #expect(r == .tooLarge)
}

@Test func aPacketPastTheWindowForcesTheOldestOut() {
    let b = RTPReorderBuffer(capacity: 4, packetBytes: 8, repairWait: .seconds(10))
    var out: [(UInt16, Int)] = []
    _ = insert(b, 10, at: 0, into: &out)
    drain(b, at: 0, into: &out)
    // 11 is missing; 12 and 13 wait behind it.
    _ = insert(b, 12, at: 0, into: &out)
    _ = insert(b, 13, at: 0, into: &out)
    drain(b, at: 0, into: &out)
    #expect(out.map(\.0) == [10])
    // 16 needs the window to start at 13: 11 is given up, 12 released.
    _ = insert(b, 16, at: 0, into: &out)
    #expect(out.map(\.0) == [10, 12])
    #expect(out.last?.1 == 1)
    drain(b, at: 0, into: &out)
    #expect(out.map(\.0) == [10, 12, 13])
}

@Test func sequenceNumbersWrapAround() {
    let b = RTPReorderBuffer(capacity: 16, packetBytes: 8, repairWait: .milliseconds(400))
    var out: [(UInt16, Int)] = []
    for n: UInt16 in [65534, 0, 65535, 1] {
        _ = insert(b, n, at: 0, into: &out)
        drain(b, at: 0, into: &out)
    }
    #expect(out.map(\.0) == [65534, 65535, 0, 1])
}
