/// A 64-bit NTP timestamp (RFC 5905 section 6, as used by RFC 3550 section
/// 4): seconds since 1 January 1900 in the high 32 bits, the fraction of a
/// second in the low 32 bits.
///
/// Sans-IO code never reads the wall clock: the shell converts the real
/// clock with `init(sinceUnixEpoch:)` and passes the value in.
package struct NTPTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Seconds from the NTP epoch (1900) to the Unix epoch (1970).
    package static let unixEpochOffsetSeconds: UInt64 = 2_208_988_800

    package var rawValue: UInt64

    package init(rawValue: UInt64) { self.rawValue = rawValue }

    package init(seconds: UInt32, fraction: UInt32) {
        rawValue = UInt64(seconds) << 32 | UInt64(fraction)
    }

    /// The NTP time `sinceUnixEpoch` after 1970-01-01 00:00 UTC. Negative
    /// durations give the Unix epoch itself; the 32-bit seconds field wraps
    /// in 2036 (era 1), as it does on the wire.
    package init(sinceUnixEpoch: Duration) {
        let ns = max(0, sinceUnixEpoch.nanoseconds)
        let seconds = UInt64(ns / 1_000_000_000) &+ Self.unixEpochOffsetSeconds
        rawValue = seconds << 32 | Self.fraction(nanoseconds: UInt64(ns % 1_000_000_000))
    }

    package var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    package var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// The middle 32 bits (16.16 fixed point seconds): the LSR field of a
    /// reception report (RFC 3550 section 6.4.1).
    package var compact: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    package static func < (a: NTPTimestamp, b: NTPTimestamp) -> Bool { a.rawValue < b.rawValue }

    /// Adds a non-negative duration, wrapping like the wire format.
    package static func + (a: NTPTimestamp, d: Duration) -> NTPTimestamp {
        let ns = UInt64(max(0, d.nanoseconds))
        let whole = (ns / 1_000_000_000) << 32
        return NTPTimestamp(rawValue: a.rawValue &+ whole &+ fraction(nanoseconds: ns % 1_000_000_000))
    }

    package var description: String { "NTP(\(seconds).\(fraction))" }

    /// `nanoseconds` (below one second) in units of 2^-32 s, rounded down.
    static func fraction(nanoseconds: UInt64) -> UInt64 {
        (nanoseconds << 32) / 1_000_000_000
    }
}
