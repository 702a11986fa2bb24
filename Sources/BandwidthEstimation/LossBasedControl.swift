import Wire

/// The loss-based controller (draft-ietf-rmcat-gcc-02 section 6): a rate
/// that falls with heavy loss and grows with little.
///
/// - loss above 10 %: rate × (1 − 0.5 × loss), at most once per 300 ms so
///   one loss burst reported by several feedbacks counts once;
/// - loss below 2 %: grows 8 % per second of elapsed time (libwebrtc's
///   pace; the draft's 5 % per report would depend on the feedback rate);
/// - in between: holds, since some loss is the link's, not congestion's.
///
/// The rate is a cap that exists only after heavy loss: nil until a
/// decrease, and nil again once low loss has grown it past 1.5 times the
/// rate it caps (the episode is over). Decreases start from the current
/// estimate when that is lower.
struct LossBasedControl: Sendable {
    static let decreaseAbove = 0.10
    static let increaseBelow = 0.02
    static let decreaseInterval: Duration = .milliseconds(300)
    static let increasePerSecond = 1.08

    private(set) var rate: Double?
    private var lastUpdate: Instant?
    private var lastDecrease: Instant?

    /// Applies one loss observation, `fraction` in 0 ... 1.
    mutating func update(fraction: Double, estimate: Double, now: Instant) {
        let elapsed = lastUpdate.map { min(max(AIMDRateControl.seconds(now - $0), 0), 1) } ?? 0
        lastUpdate = now
        if fraction > Self.decreaseAbove {
            if let lastDecrease, now - lastDecrease < Self.decreaseInterval { return }
            rate = min(rate ?? estimate, estimate) * (1 - 0.5 * min(fraction, 1))
            lastDecrease = now
        } else if fraction < Self.increaseBelow, let current = rate {
            rate = current + max(current * (Math.power(Self.increasePerSecond, elapsed) - 1), 1000 * elapsed)
        }
    }

    /// Ends the episode when the cap has grown past 1.5 × `base`, and keeps
    /// it at or above `minimum`.
    mutating func settle(base: Double, minimum: Double) {
        guard let current = rate else { return }
        rate = current > 1.5 * base ? nil : max(current, minimum)
    }
}
