import Wire

/// Maps the monotonic `Instant` to NTP time (RFC 5905 section 6: UQ32.32
/// seconds since 1900) from one reading of the wall clock taken by the
/// caller at `epoch`. Senders stamp abs-capture-time and abs-send-time
/// with it; receivers on the same machine subtract it from their own
/// reading to get the end-to-end delay. Never reads a clock itself.
package struct NTPClock: Equatable, Sendable {
    /// NTP time at `epoch`.
    package var base: UInt64
    package var epoch: Instant

    package init(base: UInt64, epoch: Instant) {
        self.base = base
        self.epoch = epoch
    }

    /// Seconds from 1900 to 1970 (RFC 5905 figure 4).
    package static let unixEpochOffset: UInt64 = 2_208_988_800

    /// From a Unix time in nanoseconds read at `epoch`.
    package init(unixNanoseconds: Int64, epoch: Instant) {
        let ns = UInt64(max(0, unixNanoseconds))
        self.init(base: Self.fixedPoint(nanoseconds: ns) &+ Self.unixEpochOffset << 32, epoch: epoch)
    }

    static func fixedPoint(nanoseconds ns: UInt64) -> UInt64 {
        (ns / 1_000_000_000) << 32 | ((ns % 1_000_000_000) << 32) / 1_000_000_000
    }

    /// NTP UQ32.32 at `instant` (instants before `epoch` clamp to it).
    package func ntp(at instant: Instant) -> UInt64 {
        let ns = (instant - epoch).nanoseconds
        return base &+ Self.fixedPoint(nanoseconds: UInt64(max(0, ns)))
    }

    /// The 24-bit abs-send-time value: NTP seconds in 6.18 fixed point.
    package func absSendTime(at instant: Instant) -> UInt32 {
        UInt32(truncatingIfNeeded: ntp(at: instant) >> 14) & 0xFF_FFFF
    }

    /// How long ago `ntp` was, seen at `instant`; nil when it lies in the
    /// future by more than 1 ms (another machine, or a clock step) or more
    /// than an hour back.
    package func elapsed(since ntp: UInt64, at instant: Instant) -> Duration? {
        let now = self.ntp(at: instant)
        let difference = Int64(bitPattern: now &- ntp)
        let nanoseconds = (difference >> 32) * 1_000_000_000 + ((difference & 0xFFFF_FFFF) * 1_000_000_000) >> 32
        guard nanoseconds > -1_000_000, nanoseconds < 3_600_000_000_000 else { return nil }
        return .nanoseconds(max(0, nanoseconds))
    }
}
