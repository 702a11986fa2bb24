import Wire

/// The delay-based rate controller (draft-ietf-rmcat-gcc-02 section 5.5):
/// a state machine driven by the over-use detector's signal.
///
///     signal \ state   hold       increase    decrease
///     over-use         decrease   decrease    decrease
///     normal           increase   increase    hold
///     under-use        hold       hold        hold
///
/// Increase is multiplicative (8 % per second) while the link capacity is
/// unknown, additive (about one packet per response time) once a decrease
/// has measured it and the acknowledged rate stays near it. Decrease sets
/// the rate to `beta` (0.85) times the acknowledged bitrate, at most once
/// per round trip (at least 200 ms apart unless the acknowledged rate fell
/// below half the rate). The rate never grows past 1.5 times the
/// acknowledged bitrate plus 10 kbit/s: a sender that is not using its
/// estimate learns nothing about the path above it.
struct AIMDRateControl: Sendable {
    enum State: Sendable { case hold, increase, decrease }

    static let beta = 0.85
    static let multiplicativeIncreasePerSecond = 1.08
    static let minimumAdditiveIncrease = 4000.0

    private(set) var rate: Double
    private(set) var state: State = .increase
    let minimum: Double
    let maximum: Double
    /// Mean and variance (normalised by the mean) of the acknowledged
    /// bitrate at past decreases: the link capacity, once known.
    private(set) var capacity: Double?
    private var capacityVariance = 0.4
    private var lastUpdate: Instant?
    private var lastDecrease: Instant?

    init(initial: Double, minimum: Double, maximum: Double) {
        self.minimum = minimum
        self.maximum = maximum
        rate = min(max(initial, minimum), maximum)
    }

    /// Raises the rate to `value` when higher (a successful probe), and
    /// forgets the capacity so growth is multiplicative again.
    mutating func raise(to value: Double) {
        guard value > rate else { return }
        rate = min(value, maximum)
        capacity = nil
    }

    mutating func update(usage: BandwidthUsage, acknowledged: Double?, roundTrip: Duration, now: Instant) {
        let elapsed = lastUpdate.map { Self.seconds(now - $0) } ?? 0
        lastUpdate = now
        switch (usage, state) {
        case (.overusing, _): state = .decrease
        case (.underusing, _): state = .hold
        case (.normal, .hold): state = .increase
        case (.normal, .increase), (.normal, .decrease): break
        }
        switch state {
        case .hold:
            break
        case .increase:
            increase(acknowledged: acknowledged, elapsed: min(max(elapsed, 0), 1), roundTrip: roundTrip)
        case .decrease:
            decrease(acknowledged: acknowledged, roundTrip: roundTrip, now: now)
            state = .hold
        }
        rate = min(max(rate, minimum), maximum)
    }

    private mutating func increase(acknowledged: Double?, elapsed: Double, roundTrip: Duration) {
        if let acknowledged, let mean = capacity {
            // Outside three deviations of the capacity seen so far: the
            // path changed, so search multiplicatively again.
            let deviation = (capacityVariance * mean).squareRoot()
            if acknowledged > mean + 3 * deviation { capacity = nil }
        }
        var increased: Double
        if capacity != nil {
            // Additive: one average packet per response time (section 5.5).
            let responseTime = max(Self.seconds(roundTrip), 0.01) + 0.1
            let bitsPerFrame = rate / 30
            let packetsPerFrame = max((bitsPerFrame / (1200 * 8)).rounded(.up), 1)
            let packetBits = bitsPerFrame / packetsPerFrame
            let perSecond = max(Self.minimumAdditiveIncrease, packetBits / responseTime)
            increased = rate + perSecond * elapsed
        } else {
            let factor = Math.power(Self.multiplicativeIncreasePerSecond, elapsed)
            increased = rate + max(rate * (factor - 1), 1000 * elapsed)
        }
        if let acknowledged {
            increased = min(increased, max(rate, 1.5 * acknowledged + 10_000))
        }
        rate = increased
    }

    private mutating func decrease(acknowledged: Double?, roundTrip: Duration, now: Instant) {
        let interval = min(max(Self.seconds(roundTrip), 0.01), 0.2)
        let measured = acknowledged ?? rate
        if let lastDecrease, Self.seconds(now - lastDecrease) < interval, measured >= rate / 2 { return }
        var decreased = Self.beta * measured
        if decreased > rate, let capacity { decreased = Self.beta * capacity }
        if decreased < rate { rate = decreased }
        lastDecrease = now
        if let acknowledged { learnCapacity(acknowledged) }
    }

    private mutating func learnCapacity(_ sample: Double) {
        guard let mean = capacity else {
            capacity = sample
            return
        }
        let alpha = 0.05
        let updated = (1 - alpha) * mean + alpha * sample
        let normalisation = max(updated, 1)
        let error = updated - sample
        capacityVariance = (1 - alpha) * capacityVariance + alpha * error * error / normalisation
        capacityVariance = min(max(capacityVariance, 0.4), 2.5)
        capacity = updated
    }

    static func seconds(_ d: Duration) -> Double { Double(d.nanoseconds) / 1e9 }
}
