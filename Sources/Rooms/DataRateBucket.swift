import Wire

/// A token bucket for one participant's relayed data channel messages:
/// `rate` tokens a second up to `burst`, one per message.
package struct DataRateBucket: Equatable, Sendable {
    /// Tokens in thousandths, so that whole milliseconds refill exactly.
    private var milliTokens: Int64?
    private var last: Instant?
    /// When a refusal was last reported to the sender: at most one error
    /// message a second, however fast it sends.
    private var lastReport: Instant?

    package init() {}

    /// Takes one token at `now`; false when empty.
    package mutating func take(now: Instant, rate: Int, burst: Int) -> Bool {
        let full = Int64(max(burst, 1)) * 1000
        var tokens = milliTokens ?? full
        if let last, now > last {
            let elapsedMilliseconds = (now - last).nanoseconds / 1_000_000
            tokens = min(full, tokens + elapsedMilliseconds * Int64(max(rate, 0)))
            self.last = last + .milliseconds(elapsedMilliseconds)
        } else if last == nil {
            last = now
        }
        guard tokens >= 1000 else {
            milliTokens = tokens
            return false
        }
        milliTokens = tokens - 1000
        return true
    }

    /// Whether to tell the sender about a refusal at `now`.
    package mutating func shouldReportRefusal(now: Instant) -> Bool {
        if let lastReport, now - lastReport < .seconds(1) { return false }
        lastReport = now
        return true
    }
}
