/// A point on a monotonic clock, in nanoseconds from an arbitrary origin.
///
/// Protocol code never reads a clock: every `handle` and `poll` takes the
/// current `Instant` as a parameter. Only the I/O shell reads the real
/// clock; tests drive a virtual one (SFUTesting's `VirtualClock`).
package struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var nanoseconds: Int64
    package init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }
    package static let zero = Instant(nanoseconds: 0)

    package static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }
    package static func + (a: Instant, d: Duration) -> Instant { Instant(nanoseconds: a.nanoseconds + d.nanoseconds) }
    package static func - (a: Instant, d: Duration) -> Instant { Instant(nanoseconds: a.nanoseconds - d.nanoseconds) }
    package static func - (a: Instant, b: Instant) -> Duration { .nanoseconds(a.nanoseconds - b.nanoseconds) }
    package static func += (a: inout Instant, d: Duration) { a = a + d }
    package var description: String { "\(Double(nanoseconds) / 1e9)s" }
}

extension Duration {
    /// Whole nanoseconds, saturating at the `Int64` range.
    package var nanoseconds: Int64 {
        let (s, atto) = components
        let (ns, overflow) = s.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return s < 0 ? .min : .max }
        return ns &+ atto / 1_000_000_000
    }
}

/// A bit rate in bits per second.
package struct Bitrate: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var bitsPerSecond: Int64
    package init(bitsPerSecond: Int64) { self.bitsPerSecond = bitsPerSecond }
    package static func kbps(_ v: Int64) -> Bitrate { Bitrate(bitsPerSecond: v * 1000) }
    package static func mbps(_ v: Int64) -> Bitrate { Bitrate(bitsPerSecond: v * 1_000_000) }
    package static func < (a: Bitrate, b: Bitrate) -> Bool { a.bitsPerSecond < b.bitsPerSecond }
    package var description: String { "\(bitsPerSecond) bit/s" }
}
