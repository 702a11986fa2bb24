/// The rate at which the receiver got our packets, from transport-wide
/// feedback: bytes received over a sliding window of receiver arrival time.
///
/// The delay-based controller decreases to a fraction of this and never
/// increases far beyond it (draft-ietf-rmcat-gcc-02 section 5.5, "R_hat").
/// Arrival times are the receiver's clock; an arrival more than the window
/// earlier than the newest, or a jump forward, simply ages samples out.
///
/// The samples live in a ring that holds what the window holds: it starts
/// at 256 and doubles only when a full window does not fit (up to
/// `maximumSamples`), so steady feedback neither allocates nor keeps more
/// than about a window of samples (issue #14: memory per subscriber).
struct AcknowledgedBitrate: Sendable {
    static let window: Int64 = 500_000_000
    static let minimumSpan: Int64 = 100_000_000
    static let maximumSamples = 4096
    static let initialSamples = 256

    private struct Sample: Sendable {
        var arrival: Int64
        var size: Int
    }

    private var samples: [Sample] = []
    /// Index of the oldest sample kept, and how many are kept.
    private var head = 0
    private var count = 0
    private var bytes = 0
    private var newest: Int64?
    private var oldestKept: Int64?

    /// Bits per second, nil until at least 100 ms of arrivals were seen.
    private(set) var rate: Double?

    /// Samples the ring has room for (tests).
    var capacity: Int { samples.count }

    mutating func add(arrival: Int64, size: Int) {
        if let newest, arrival < newest &- Self.window { return }
        if arrival > (newest ?? .min) { newest = arrival }
        if oldestKept == nil { oldestKept = arrival }
        evict()
        if count == samples.count {
            if samples.count < Self.maximumSamples {
                grow()
            } else {
                // A window of more than `maximumSamples` packets: the
                // oldest goes (the rate reads a shorter window).
                dropOldest()
                oldestKept = newest.map { $0 &- Self.window }
            }
        }
        samples[(head + count) & (samples.count - 1)] = Sample(arrival: arrival, size: size)
        count += 1
        bytes &+= size
    }

    /// Recomputes `rate` after a feedback's packets were added.
    mutating func update() {
        guard let newest, let oldest = oldestKept else { return }
        let span = min(max(newest &- oldest, 0), Self.window)
        guard span >= Self.minimumSpan else { return }
        rate = Double(bytes) * 8 / (Double(span) / 1e9)
    }

    private mutating func evict() {
        guard let newest else { return }
        while count > 0, samples[head].arrival < newest &- Self.window {
            dropOldest()
            oldestKept = newest &- Self.window
        }
    }

    private mutating func dropOldest() {
        bytes &-= samples[head].size
        head = (head + 1) & (samples.count - 1)
        count -= 1
    }

    /// Doubles the ring (a power of two), oldest sample first.
    private mutating func grow() {
        let size = samples.isEmpty ? Self.initialSamples : samples.count * 2
        var larger = [Sample](repeating: Sample(arrival: 0, size: 0), count: size)
        for i in 0..<count { larger[i] = samples[(head + i) & (samples.count - 1)] }
        samples = larger
        head = 0
    }
}
