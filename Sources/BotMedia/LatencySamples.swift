/// A bounded sample of durations (join time, first-frame time, end-to-end
/// delay) and their percentiles.
///
/// Keeps every sample up to `capacity`; after that, reservoir sampling
/// (Vitter's algorithm R) with a seeded xorshift keeps a uniform sample of
/// all of them, so memory stays fixed however long a bot runs. Recording
/// allocates nothing (the storage is reserved at init); percentiles sort a
/// copy and are meant for reports, not the packet path.
package struct LatencySamples: Sendable {
    package let capacity: Int
    /// Samples seen, kept or not.
    package private(set) var count = 0
    package private(set) var minimum: Duration?
    package private(set) var maximum: Duration?
    private var total: Duration = .zero
    private var samples: [Duration]
    private var random: UInt64

    package init(capacity: Int = 4096, seed: UInt64 = 0x2545_F491_4F6C_DD1D) {
        self.capacity = max(1, capacity)
        samples = []
        samples.reserveCapacity(self.capacity)
        random = seed == 0 ? 1 : seed
    }

    package mutating func record(_ sample: Duration) {
        count += 1
        total += sample
        if minimum.map({ sample < $0 }) ?? true { minimum = sample }
        if maximum.map({ sample > $0 }) ?? true { maximum = sample }
        if samples.count < capacity {
            samples.append(sample)
            return
        }
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        let slot = Int(random % UInt64(count))
        if slot < capacity { samples[slot] = sample }
    }

    /// The mean of every sample seen.
    package var mean: Duration? { count == 0 ? nil : total / count }

    /// The `p`-th percentile (0...100) of the kept samples by the
    /// nearest-rank method; nil without samples.
    package func percentile(_ p: Double) -> Duration? {
        guard !samples.isEmpty, p >= 0, p <= 100 else { return nil }
        let sorted = samples.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    /// The samples kept (all of them up to `capacity`), unordered.
    package var kept: [Duration] { samples }

    /// p50, p95, p99 in one sort.
    package var summary: (p50: Duration, p95: Duration, p99: Duration)? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        func at(_ p: Double) -> Duration {
            sorted[min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))]
        }
        return (at(50), at(95), at(99))
    }
}
