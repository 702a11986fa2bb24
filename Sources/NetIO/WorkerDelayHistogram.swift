import Synchronization
import Wire

/// How long a worker holds the datagrams it sends in answer to one it
/// received: from the `recvmmsg` that returned the received datagram to the
/// `sendmmsg` that hands each answer to the kernel (forwarded copies,
/// retransmissions, STUN answers). It is the delay the server's own code
/// adds to a forwarded packet, without the kernel's queues on either side;
/// issue #14 asks for its p99 under 1 ms at half of the saturated load.
///
/// Fixed buckets in an inline array: recording allocates nothing, and a
/// copy (a snapshot for `/metrics`) is a plain value copy.
package struct WorkerDelayHistogram: Sendable, Equatable {
    /// Upper bounds of the buckets, in microseconds; one more bucket holds
    /// the longer delays.
    package static let boundsMicroseconds: [Int64] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 50_000]
    package static let bucketCount = 13

    package private(set) var counts = InlineArray<13, UInt64>(repeating: 0)
    package private(set) var total: UInt64 = 0
    package private(set) var sumNanoseconds: UInt64 = 0

    package init() {}

    /// The bucket of a delay: a short linear walk over 12 bounds.
    @inline(__always)
    static func bucket(nanoseconds: Int64) -> Int {
        let microseconds = nanoseconds / 1000
        var i = 0
        while i < 12 && microseconds > boundsMicroseconds[i] { i += 1 }
        return i
    }

    package mutating func record(nanoseconds: Int64) {
        let d = max(nanoseconds, 0)
        counts[Self.bucket(nanoseconds: d)] &+= 1
        total &+= 1
        sumNanoseconds &+= UInt64(d)
    }

    package mutating func merge(_ other: WorkerDelayHistogram) {
        for i in 0..<Self.bucketCount { counts[i] &+= other.counts[i] }
        total &+= other.total
        sumNanoseconds &+= other.sumNanoseconds
    }

    /// The upper bound, in microseconds, of the bucket at or below which
    /// `fraction` of the samples lie (nil without samples; nil too past the
    /// last bound: longer than 50 ms).
    package func quantileMicroseconds(_ fraction: Double) -> Int64? {
        guard total > 0 else { return nil }
        let wanted = UInt64((Double(total) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for i in 0..<Self.bucketCount {
            seen &+= counts[i]
            if seen >= wanted { return i < Self.boundsMicroseconds.count ? Self.boundsMicroseconds[i] : nil }
        }
        return nil
    }

    package static func == (a: WorkerDelayHistogram, b: WorkerDelayHistogram) -> Bool {
        guard a.total == b.total, a.sumNanoseconds == b.sumNanoseconds else { return false }
        for i in 0..<bucketCount where a.counts[i] != b.counts[i] { return false }
        return true
    }
}

/// A worker's delay histogram as last published by its transmit queue
/// (relaxed stores once per flush that recorded something: no lock), for
/// `/metrics` on another thread.
package final class PublishedDelayHistogram: @unchecked Sendable {
    // @unchecked: the pointer is allocated once, initialized to atomics
    // and never reassigned; every access goes through the atomics.
    private let cells: UnsafeMutablePointer<Atomic<UInt64>>
    private static let cellCount = WorkerDelayHistogram.bucketCount + 2

    package init() {
        cells = .allocate(capacity: Self.cellCount)
        for i in 0..<Self.cellCount { (cells + i).initialize(to: Atomic(0)) }
    }

    deinit {
        cells.deinitialize(count: Self.cellCount)
        cells.deallocate()
    }

    /// Worker thread only (one writer).
    func publish(_ h: WorkerDelayHistogram) {
        for i in 0..<WorkerDelayHistogram.bucketCount { cells[i].store(h.counts[i], ordering: .relaxed) }
        cells[WorkerDelayHistogram.bucketCount].store(h.total, ordering: .relaxed)
        cells[WorkerDelayHistogram.bucketCount + 1].store(h.sumNanoseconds, ordering: .relaxed)
    }

    /// Any thread: the last published histogram. Buckets are read one by
    /// one, so a read racing a publication may mix two flushes' counts
    /// (each bucket only grows): good enough for metrics.
    package var snapshot: WorkerDelayHistogram {
        var h = WorkerDelayHistogram()
        h.load(
            counts: { cells[$0].load(ordering: .relaxed) },
            total: cells[WorkerDelayHistogram.bucketCount].load(ordering: .relaxed),
            sum: cells[WorkerDelayHistogram.bucketCount + 1].load(ordering: .relaxed))
        return h
    }
}

extension WorkerDelayHistogram {
    fileprivate mutating func load(counts read: (Int) -> UInt64, total: UInt64, sum: UInt64) {
        for i in 0..<Self.bucketCount { counts[i] = read(i) }
        self.total = total
        sumNanoseconds = sum
    }
}
