import Wire

/// A clock that moves only when a test says so. Sans-IO engines take `now`
/// as a parameter; tests pass `clock.now` and step it with `advance(by:)`,
/// so timing behaviour (retransmissions, consent, throttles) is exact and
/// never depends on sleeping.
package struct VirtualClock: Sendable {
    package private(set) var now: Instant

    package init(start: Instant = Instant(nanoseconds: 1_000_000_000)) { now = start }

    package mutating func advance(by d: Duration) {
        precondition(d >= .zero, "a virtual clock never goes backwards")
        now += d
    }

    /// Moves to `deadline` if it is in the future; returns the new time.
    @discardableResult
    package mutating func advance(to deadline: Instant) -> Instant {
        if deadline > now { now = deadline }
        return now
    }
}
