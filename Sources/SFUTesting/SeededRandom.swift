/// xorshift64, seeded: the same pseudo-random sequence on every run, for
/// tests that want variety without flakiness (loss patterns, target
/// changes, mutated inputs). Not for anything that must be unpredictable.
package struct SeededRandom: Sendable {
    package private(set) var state: UInt64

    package init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    package mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    /// Uniform in 0..<bound (0 when bound < 1).
    package mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }

    /// Uniform in [0, 1).
    package mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
