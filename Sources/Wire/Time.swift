/// A point on a monotonic clock, in nanoseconds from an arbitrary origin.
///
/// Protocol code never reads a clock: every `handle` and `poll` takes the
/// current `Instant` as a parameter. Only the I/O shell reads the real
/// clock; tests drive a virtual one (SFUTesting's `VirtualClock`).
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }
    public static let zero = Instant(nanoseconds: 0)

    public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }
    public static func + (a: Instant, d: Duration) -> Instant { Instant(nanoseconds: a.nanoseconds + d.nanoseconds) }
    public static func - (a: Instant, d: Duration) -> Instant { Instant(nanoseconds: a.nanoseconds - d.nanoseconds) }
    public static func - (a: Instant, b: Instant) -> Duration { .nanoseconds(a.nanoseconds - b.nanoseconds) }
    public static func += (a: inout Instant, d: Duration) { a = a + d }
    public var description: String { "\(Double(nanoseconds) / 1e9)s" }
}

extension Duration {
    /// Whole nanoseconds, saturating at the `Int64` range.
    public var nanoseconds: Int64 {
        let (s, atto) = components
        let (ns, overflow) = s.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return s < 0 ? .min : .max }
        return ns &+ atto / 1_000_000_000
    }
}

/// A bit rate in bits per second.
public struct Bitrate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var bitsPerSecond: Int64
    public init(bitsPerSecond: Int64) { self.bitsPerSecond = bitsPerSecond }
    public static func kbps(_ v: Int64) -> Bitrate { Bitrate(bitsPerSecond: v * 1000) }
    public static func mbps(_ v: Int64) -> Bitrate { Bitrate(bitsPerSecond: v * 1_000_000) }
    public static func < (a: Bitrate, b: Bitrate) -> Bool { a.bitsPerSecond < b.bitsPerSecond }
    public var description: String { "\(bitsPerSecond) bit/s" }
}
