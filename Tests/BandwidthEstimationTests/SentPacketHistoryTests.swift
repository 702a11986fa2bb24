import BandwidthEstimation
import Testing
import Wire

@Suite struct SentPacketHistoryTests {
    @Test func remembersSendTimeSizeAndKind() throws {
        var history = SentPacketHistory(capacity: 8, firstSequenceNumber: 100)
        let seq = history.nextSequenceNumber()
        #expect(seq == 100)
        #expect(history.nextSequenceNumber() == 101)
        history.sent(transportSequenceNumber: 100, size: 1200, at: Instant(nanoseconds: 5), kind: .probe)
        let packet = try #require(history.packet(100))
        #expect(packet.size == 1200)
        #expect(packet.sentAt == Instant(nanoseconds: 5))
        #expect(packet.kind == .probe)
        #expect(packet.wireSequenceNumber == 100)
        #expect(history.packet(101) == nil)
    }

    @Test func counterAndLookupWrapAt65536() throws {
        var history = SentPacketHistory(capacity: 16, firstSequenceNumber: 65534)
        var numbers: [UInt16] = []
        for i in 0..<4 {
            let seq = history.nextSequenceNumber()
            numbers.append(seq)
            history.sent(transportSequenceNumber: seq, size: 100 + i, at: Instant(nanoseconds: Int64(i)), kind: .media)
        }
        #expect(numbers == [65534, 65535, 0, 1])
        let before = try #require(history.packet(65535))
        let after = try #require(history.packet(0))
        #expect(after.sequenceNumber == before.sequenceNumber + 1)
        #expect(after.size == 102)
        #expect(try #require(history.packet(1)).size == 103)
    }

    @Test func forgetsPacketsOlderThanItsCapacity() {
        var history = SentPacketHistory(capacity: 4)
        for i in 0..<10 {
            let seq = history.nextSequenceNumber()
            history.sent(transportSequenceNumber: seq, size: 1, at: Instant(nanoseconds: Int64(i)), kind: .media)
        }
        #expect(history.packet(5) == nil)
        #expect(history.packet(6) != nil)
        #expect(history.packet(9) != nil)
        #expect(history.packet(10) == nil)
        // Half the number space away: never sent in this history's window.
        #expect(history.packet(40000) == nil)
    }

    @Test func emptyHistoryFindsNothingAndOddSizesAreClamped() throws {
        var history = SentPacketHistory(capacity: 0)
        #expect(history.capacity == 1)
        #expect(history.packet(0) == nil)
        history.sent(transportSequenceNumber: 7, size: -5, at: .zero, kind: .retransmission)
        #expect(try #require(history.packet(7)).size == 0)
        history.sent(transportSequenceNumber: 8, size: .max, at: .zero, kind: .media)
        #expect(try #require(history.packet(8)).size == Int(Int32.max))
        #expect(history.packet(7) == nil)
    }
}

@Suite struct SentPacketHistoryGrowthTests {
    /// Sends `count` packets at `perSecond`, returning the history.
    private func sending(
        _ count: Int, perSecond: Int64, capacity: Int = SentPacketHistory.defaultCapacity
    )
        -> SentPacketHistory
    {
        var history = SentPacketHistory(capacity: capacity, firstSequenceNumber: 1)
        for i in 0..<Int64(count) {
            let seq = history.nextSequenceNumber()
            history.sent(
                transportSequenceNumber: seq, size: 1200, at: Instant(nanoseconds: i * 1_000_000_000 / perSecond),
                kind: .media)
        }
        return history
    }

    @Test func holdsAboutOneSecondOfTheRateSent() {
        // 2.5 Mbit/s of 1,000-byte packets is ~312 per second: 512 slots.
        let viewer = sending(3000, perSecond: 312)
        #expect(viewer.slotCount == 512)
        #expect(viewer.allocatedByteCount <= 16 * 1024)
        // Audio alone (50 per second) never leaves the initial ring.
        #expect(sending(500, perSecond: 50).slotCount == SentPacketHistory.defaultInitialCapacity)
    }

    @Test func neverGrowsPastItsCapacity() {
        // 1,000 rounds up to a power of two: slots are found by a mask.
        let flood = sending(50_000, perSecond: 1_000_000, capacity: 1000)
        #expect(flood.slotCount == 1024)
        #expect(flood.capacity == 1024)
    }

    @Test func growingKeepsEveryPacketOfTheLastSecond() throws {
        let history = sending(2000, perSecond: 1000)
        #expect(history.slotCount == 1024)
        // The last second (1,000 packets: numbers 1001...2000) is all held,
        // with the right send times.
        for seq in UInt16(1001)...2000 {
            let packet = try #require(history.packet(seq))
            #expect(packet.sentAt == Instant(nanoseconds: (Int64(seq) - 1) * 1_000_000))
        }
    }
}
