import Synchronization
import Wire

/// How long a worker holds the datagrams it sends in answer to one it
/// received: from the `recvmmsg` that returned the received datagram to the
/// `sendmmsg` that hands each answer to the kernel (forwarded copies,
/// retransmissions, STUN answers), in `DurationBuckets.workerDelay`
/// (`TransmitQueue.delay`). It is the delay the server's own code adds to a
/// forwarded packet, without the kernel's queues on either side; issue #14
/// asks for its p99 under 1 ms at half of the saturated load.

/// A worker's delay histogram as last published by its transmit queue
/// (relaxed stores once per flush that recorded something: no lock), for
/// `/metrics` on another thread.
package final class PublishedDelayHistogram: @unchecked Sendable {
    // @unchecked: the pointer is allocated once, initialized to atomics
    // and never reassigned; every access goes through the atomics.
    private let cells: UnsafeMutablePointer<Atomic<UInt64>>
    private static let buckets = DurationHistogram(.workerDelay).bucketCount
    private static let cellCount = buckets + 2

    package init() {
        cells = .allocate(capacity: Self.cellCount)
        for i in 0..<Self.cellCount { (cells + i).initialize(to: Atomic(0)) }
    }

    deinit {
        cells.deinitialize(count: Self.cellCount)
        cells.deallocate()
    }

    /// Worker thread only (one writer).
    func publish(_ h: DurationHistogram) {
        for i in 0..<Self.buckets { cells[i].store(h.count(inBucket: i), ordering: .relaxed) }
        cells[Self.buckets].store(h.total, ordering: .relaxed)
        cells[Self.buckets + 1].store(h.sumNanoseconds, ordering: .relaxed)
    }

    /// Any thread: the last published histogram. Buckets are read one by
    /// one, so a read racing a publication may mix two flushes' counts
    /// (each bucket only grows): good enough for metrics.
    package var snapshot: DurationHistogram {
        var h = DurationHistogram(.workerDelay)
        h.load(
            counts: { cells[$0].load(ordering: .relaxed) },
            total: cells[Self.buckets].load(ordering: .relaxed),
            sumNanoseconds: cells[Self.buckets + 1].load(ordering: .relaxed))
        return h
    }
}
