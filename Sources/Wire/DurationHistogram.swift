/// Durations counted in fixed buckets: enough for quantiles and a
/// Prometheus histogram without keeping samples. One type for every
/// duration the server counts this way (a worker's receive-to-send delay,
/// simulcast switch latency); each use names its bucket bounds
/// (`DurationBuckets`).
///
/// Inline storage: recording allocates nothing, and a copy (a snapshot for
/// `/metrics`) is a plain value copy.
package struct DurationHistogram: Sendable, Equatable {
    /// Buckets a histogram can have: `DurationBuckets.maximumBounds` bounds
    /// and one more for longer durations.
    package static let maximumBuckets = DurationBuckets.maximumBounds + 1

    package let buckets: DurationBuckets
    private var counts = InlineArray<16, UInt64>(repeating: 0)
    package private(set) var total: UInt64 = 0
    package private(set) var sumNanoseconds: UInt64 = 0

    package init(_ buckets: DurationBuckets) { self.buckets = buckets }

    /// Buckets in use: one per bound and one for longer.
    package var bucketCount: Int { buckets.count + 1 }

    /// Durations counted in bucket `i` (0 outside `0..<bucketCount`).
    package func count(inBucket i: Int) -> UInt64 {
        (0..<bucketCount).contains(i) ? counts[i] : 0
    }

    /// The bucket of a duration: a short walk over at most 15 bounds; a
    /// duration equal to a bound is in that bound's bucket.
    @inline(__always)
    package func bucket(nanoseconds: Int64) -> Int {
        var i = 0
        while i < buckets.count && nanoseconds > buckets.bound(i) { i += 1 }
        return i
    }

    /// Records one duration (a negative one as 0).
    package mutating func record(nanoseconds: Int64) {
        let d = max(nanoseconds, 0)
        counts[bucket(nanoseconds: d)] &+= 1
        total &+= 1
        sumNanoseconds &+= UInt64(d)
    }

    package mutating func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        record(nanoseconds: seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }

    /// Adds `other`'s counts; a histogram of other bounds is not added.
    package mutating func merge(_ other: DurationHistogram) {
        guard other.buckets == buckets else { return }
        for i in 0..<bucketCount { counts[i] &+= other.counts[i] }
        total &+= other.total
        sumNanoseconds &+= other.sumNanoseconds
    }

    /// The upper bound, in nanoseconds, of the bucket at or below which
    /// `fraction` of the durations lie: nil without durations, and nil
    /// past the last bound (longer than every bound).
    package func quantileNanoseconds(_ fraction: Double) -> Int64? {
        guard total > 0 else { return nil }
        let wanted = UInt64((Double(total) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for i in 0..<bucketCount {
            seen &+= counts[i]
            if seen >= wanted { return i < buckets.count ? buckets.bound(i) : nil }
        }
        return nil
    }

    /// Replaces the counts (a histogram published through atomics and read
    /// back on another thread); `read(i)` for each bucket in use.
    package mutating func load(counts read: (Int) -> UInt64, total: UInt64, sumNanoseconds: UInt64) {
        for i in 0..<bucketCount { counts[i] = read(i) }
        self.total = total
        self.sumNanoseconds = sumNanoseconds
    }

    package static func == (a: DurationHistogram, b: DurationHistogram) -> Bool {
        guard a.buckets == b.buckets, a.total == b.total, a.sumNanoseconds == b.sumNanoseconds else { return false }
        for i in 0..<a.bucketCount where a.counts[i] != b.counts[i] { return false }
        return true
    }
}

/// The upper bounds of a histogram's buckets, ascending, in nanoseconds.
package struct DurationBuckets: Sendable, Equatable {
    package static let maximumBounds = 15
    private var bounds = InlineArray<15, Int64>(repeating: 0)
    package let count: Int

    /// `upperBounds` ascending, at most `maximumBounds` of them (a setup
    /// value written in the code, not read from the wire).
    package init(nanoseconds upperBounds: [Int64]) {
        precondition(upperBounds.count <= Self.maximumBounds && upperBounds == upperBounds.sorted())
        count = upperBounds.count
        for (i, b) in upperBounds.enumerated() { bounds[i] = b }
    }

    package func bound(_ i: Int) -> Int64 { bounds[i] }

    package static func == (a: DurationBuckets, b: DurationBuckets) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a.bounds[i] != b.bounds[i] { return false }
        return true
    }

    /// A media worker's receive-to-send delay: 5 µs to 50 ms.
    package static let workerDelay = DurationBuckets(
        nanoseconds: [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 50_000].map { $0 * 1000 })
    /// Simulcast switch latency: 50 ms to 5 s.
    package static let layerSwitch = DurationBuckets(
        nanoseconds: [50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000].map { $0 * 1_000_000 })
}
