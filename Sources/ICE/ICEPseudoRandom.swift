/// A small deterministic generator (xorshift64*) for timing jitter only,
/// such as the randomized consent interval of RFC 7675 section 5.1. Tests
/// seed it to get exact deadlines. Never used for anything an attacker must
/// not guess: transaction ids, tie-breakers and credentials come from
/// CryptoPrimitives.SecureRandom.
package struct ICEPseudoRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A zero seed is replaced by a fixed non-zero one (xorshift's state
    /// must never be zero).
    package init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    package mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    /// A duration uniformly spread over `range`, at millisecond resolution.
    package mutating func duration(in range: ClosedRange<Duration>) -> Duration {
        let low = range.lowerBound.nanoseconds / 1_000_000
        let high = range.upperBound.nanoseconds / 1_000_000
        guard high > low else { return range.lowerBound }
        let span = UInt64(high - low) + 1
        return .milliseconds(low + Int64(next() % span))
    }
}
