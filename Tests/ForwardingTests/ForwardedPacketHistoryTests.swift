import Testing
import Wire

@testable import Forwarding

@Suite struct ForwardedPacketHistoryTests {
    private let t0 = Instant(nanoseconds: 5_000_000_000)

    private func rewrite(_ seq: UInt16) -> RTPRewrite {
        RTPRewrite(
            ssrc: SSRC(9), sequenceNumber: seq, timestamp: UInt32(seq) * 3000, pictureID: seq & 0x7FFF,
            tl0PictureIndex: UInt8(truncatingIfNeeded: seq))
    }

    @Test func returnsExactlyWhatWasRecorded() throws {
        var history = ForwardedPacketHistory()
        #expect(history.capacity == 256 && history.maximumCapacity == 4096)
        history.record(rewrite(65_535), sourceSSRC: SSRC(1), sourceSequenceNumber: 4000, now: t0)
        history.record(rewrite(0), sourceSSRC: SSRC(2), sourceSequenceNumber: 17, now: t0)
        let found = try #require(history.lookup(outgoingSequenceNumber: 65_535))
        #expect(found.sourceSSRC == SSRC(1))
        #expect(found.sourceSequenceNumber == 4000)
        #expect(found.rewrite == rewrite(65_535))
        let wrapped = try #require(history.lookup(outgoingSequenceNumber: 0))
        #expect(wrapped.sourceSSRC == SSRC(2))
        #expect(wrapped.sourceSequenceNumber == 17)
        #expect(wrapped.rewrite == rewrite(0))
    }

    @Test func neverSentIsNil() {
        var history = ForwardedPacketHistory()
        #expect(history.lookup(outgoingSequenceNumber: 0) == nil)
        history.record(rewrite(5), sourceSSRC: SSRC(1), sourceSequenceNumber: 5, now: t0)
        #expect(history.lookup(outgoingSequenceNumber: 6) == nil)
        #expect(history.lookup(outgoingSequenceNumber: 5 &+ 256) == nil)
    }

    @Test func overwrittenIsNil() {
        // A ring at its bound from the start (1,000 rounds up to 1,024).
        var history = ForwardedPacketHistory(capacity: 1000, initialCapacity: 1000)
        for seq in UInt16(100)..<UInt16(100 + 1025) {
            history.record(rewrite(seq), sourceSSRC: SSRC(1), sourceSequenceNumber: seq &+ 7, now: t0)
        }
        #expect(history.capacity == 1024)
        #expect(history.lookup(outgoingSequenceNumber: 100) == nil)
        #expect(history.lookup(outgoingSequenceNumber: 101)?.sourceSequenceNumber == 108)
        #expect(history.lookup(outgoingSequenceNumber: 1124)?.sourceSequenceNumber == 1131)
        history.removeAll()
        #expect(history.lookup(outgoingSequenceNumber: 1124) == nil)
    }

    @Test func capacityIsAPowerOfTwoInRange() {
        #expect(ForwardedPacketHistory(capacity: 0).maximumCapacity == 16)
        #expect(ForwardedPacketHistory(capacity: -5).maximumCapacity == 16)
        #expect(ForwardedPacketHistory(capacity: 3000).maximumCapacity == 4096)
        #expect(ForwardedPacketHistory(capacity: Int.max).maximumCapacity == 32768)
        #expect(ForwardedPacketHistory(capacity: 64, initialCapacity: 1000).capacity == 64)
        #expect(ForwardedPacketHistory(capacity: 64, initialCapacity: 20).capacity == 32)
    }

    /// Records `count` numbers from `first`, `rate` per second from `start`
    /// on a virtual clock; returns the instant after the last.
    @discardableResult
    private func forward(
        _ history: inout ForwardedPacketHistory, from first: UInt16, count: Int, rate: Int, start: Instant
    ) -> Instant {
        var now = start
        for i in 0..<count {
            now = start + .nanoseconds(Int64(i) * 1_000_000_000 / Int64(rate))
            let n = first &+ UInt16(truncatingIfNeeded: i)
            history.record(rewrite(n), sourceSSRC: SSRC(1), sourceSequenceNumber: n &+ 3, now: now)
        }
        return now
    }

    /// The ring settles at the power of two that holds one second of the
    /// subscription's rate, however long it runs: 300 packets/s (a
    /// 2.5 Mbit/s layer) in 512 entries, 100/s in the first 256, 2,000/s
    /// in 2,048; a lap slower than the retention never grows it.
    @Test func growsToHoldOneSecondOfTheRate() {
        for (rate, settled) in [(100, 256), (300, 512), (2000, 2048)] {
            var history = ForwardedPacketHistory()
            forward(&history, from: 65_000, count: rate * 10, rate: rate, start: t0)
            #expect(history.capacity == settled, "\(rate) packets/s")
            #expect(history.allocatedByteCount == settled * MemoryLayout<ForwardedPacketHistory.Entry>.stride)
        }
    }

    /// Growth keeps every mapping: the second before it is still found,
    /// across the 16-bit wrap, and a NACK a second old is answered at
    /// 300 packets/s (a fixed 256-entry ring would have lost it).
    @Test func growthKeepsWhatWasRecorded() throws {
        var history = ForwardedPacketHistory()
        let end = forward(&history, from: 65_400, count: 600, rate: 300, start: t0)
        #expect(history.capacity == 512)
        let last = UInt16(truncatingIfNeeded: 65_400 + 599)
        for back in UInt16(0)..<300 {
            let n = last &- back
            let found = try #require(history.lookup(outgoingSequenceNumber: n), "\(n)")
            #expect(found.sourceSequenceNumber == n &+ 3 && found.rewrite == rewrite(n))
        }
        #expect(end - t0 < .seconds(2))
    }

    /// The bound holds at any rate, and a subscription whose numbers go
    /// back (restarted) starts a new lap without growing.
    @Test func neverGrowsPastItsBound() {
        var history = ForwardedPacketHistory(capacity: 1024)
        forward(&history, from: 0, count: 20_000, rate: 50_000, start: t0)
        #expect(history.capacity == 1024)
        var restarted = ForwardedPacketHistory()
        forward(&restarted, from: 1000, count: 100, rate: 100, start: t0)
        forward(&restarted, from: 0, count: 100, rate: 100, start: t0 + .seconds(1))
        #expect(restarted.capacity == 256)
    }
}
