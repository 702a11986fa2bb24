/// The rate at which the receiver got our packets, from transport-wide
/// feedback: bytes received over a sliding window of receiver arrival time.
///
/// The delay-based controller decreases to a fraction of this and never
/// increases far beyond it (draft-ietf-rmcat-gcc-02 section 5.5, "R_hat").
/// Arrival times are the receiver's clock; an arrival more than the window
/// earlier than the newest, or a jump forward, simply ages samples out.
struct AcknowledgedBitrate: Sendable {
    static let window: Int64 = 500_000_000
    static let minimumSpan: Int64 = 100_000_000
    static let maximumSamples = 4096

    private var arrivals: [Int64] = []
    private var sizes: [Int] = []
    private var head = 0
    private var bytes = 0
    private var newest: Int64?
    private var oldestKept: Int64?

    /// Bits per second, nil until at least 100 ms of arrivals were seen.
    private(set) var rate: Double?

    mutating func add(arrival: Int64, size: Int) {
        if let newest, arrival < newest &- Self.window { return }
        arrivals.append(arrival)
        sizes.append(size)
        bytes &+= size
        if arrival > (newest ?? .min) { newest = arrival }
        if oldestKept == nil { oldestKept = arrival }
        evict()
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
        while head < arrivals.count,
            arrivals[head] < newest &- Self.window || arrivals.count - head > Self.maximumSamples
        {
            bytes &-= sizes[head]
            head += 1
            oldestKept = newest &- Self.window
        }
        if head > 1024, head * 2 > arrivals.count {
            arrivals.removeFirst(head)
            sizes.removeFirst(head)
            head = 0
        }
    }
}
