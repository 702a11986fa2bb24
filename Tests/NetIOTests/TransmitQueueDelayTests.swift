import Testing
import Wire

@testable import NetIO

@Suite struct TransmitQueueDelayTests {
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
        for i in 0..<11 { #expect(queue.delay.count(inBucket: i) == 0) }
        #expect(queue.delay.sumNanoseconds >= 40_000_000)
        #expect(queue.publishedDelay.snapshot == queue.delay)
        // The stamps were consumed: a later flush of unstamped slots adds nothing.
        queue.send(Array("d".utf8), to: to)
        queue.flush()
        #expect(queue.delay.total == 2)
    }
}
