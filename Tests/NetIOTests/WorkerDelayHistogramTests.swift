import Testing
import Wire

@testable import NetIO

@Suite struct WorkerDelayHistogramTests {
    @Test func delaysFallInTheBucketOfTheirUpperBound() {
        // Bounds are inclusive, in microseconds: 5, 10, 25, ... 50,000.
        #expect(WorkerDelayHistogram.bucket(nanoseconds: 0) == 0)
        #expect(WorkerDelayHistogram.bucket(nanoseconds: 5_999) == 0)
        #expect(WorkerDelayHistogram.bucket(nanoseconds: 6_000) == 1)
        #expect(WorkerDelayHistogram.bucket(nanoseconds: 1_000_000) == 7)
        #expect(WorkerDelayHistogram.bucket(nanoseconds: 1_001_000) == 8)
        #expect(WorkerDelayHistogram.bucket(nanoseconds: 50_000_999) == 11)
        #expect(WorkerDelayHistogram.bucket(nanoseconds: 50_001_000) == 12)
        #expect(WorkerDelayHistogram.boundsMicroseconds.count + 1 == WorkerDelayHistogram.bucketCount)
    }

    @Test func quantilesAreBucketBounds() {
        var h = WorkerDelayHistogram()
        #expect(h.quantileMicroseconds(0.99) == nil)
        for _ in 0..<98 { h.record(nanoseconds: 40_000) }  // 40 µs: the 50 µs bucket
        h.record(nanoseconds: 700_000)  // the 1 ms bucket
        h.record(nanoseconds: 80_000_000)  // past the last bound
        #expect(h.total == 100)
        #expect(h.quantileMicroseconds(0.5) == 50)
        #expect(h.quantileMicroseconds(0.98) == 50)
        #expect(h.quantileMicroseconds(0.99) == 1000)
        #expect(h.quantileMicroseconds(1.0) == nil)
        // A clock that went backwards counts as no delay, not a negative one.
        h.record(nanoseconds: -5)
        #expect(h.counts[0] == 1)

        var merged = WorkerDelayHistogram()
        merged.merge(h)
        merged.merge(h)
        #expect(merged.total == 2 * h.total)
        #expect(merged.sumNanoseconds == 2 * h.sumNanoseconds)
    }

    /// The queue records, at the flush, how long each datagram sent while
    /// handling a received one waited since it was received; datagrams sent
    /// outside a receive (timers, control) are not measured.
    @Test func theFlushRecordsTheWaitOfDatagramsSentInAnswer() throws {
        let sink = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let sender = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
        let queue = TransmitQueue(descriptor: sender.descriptor, capacity: 8, slotSize: 64)
        let to = try sink.localAddress().transportAddress
        queue.ingress = Instant(nanoseconds: MonotonicClock.now().nanoseconds - 20_000_000)
        queue.send(Array("a".utf8), to: to)
        queue.send(Array("b".utf8), to: to)
        queue.ingress = nil
        queue.send(Array("c".utf8), to: to)
        queue.flush()
        #expect(queue.sent == 3)
        #expect(queue.delay.total == 2)
        // At least the 20 ms since the ingress: nothing in the buckets up
        // to 10 ms.
        for i in 0..<11 { #expect(queue.delay.counts[i] == 0) }
        #expect(queue.delay.sumNanoseconds >= 40_000_000)
        #expect(queue.publishedDelay.snapshot == queue.delay)
        // The stamps were consumed: a later flush of unstamped slots adds nothing.
        queue.send(Array("d".utf8), to: to)
        queue.flush()
        #expect(queue.delay.total == 2)
    }
}
