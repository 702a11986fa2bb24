import Wire

/// Two token buckets, one counting packets and one counting bytes, both
/// `burst` deep (`rate × burst`) and both starting full. A packet passes
/// only when both hold enough tokens. Over any interval of length T they
/// therefore pass at most `packetsPerSecond × T + depth` packets and
/// `bytesPerSecond × T + depth` bytes, however many arrive. A packet larger
/// than the byte bucket's depth never passes: choose `burst` so that
/// `bytesPerSecond × burst` exceeds the largest packet.
///
/// Tokens are kept in nano-units (tokens × 10⁹) so refills are exact
/// integer arithmetic on `Instant` nanoseconds. About 100 bytes inline,
/// no allocation.
package struct TokenBucketPair: Sendable {
    package let packetsPerSecond: Int64
    package let bytesPerSecond: Int64
    package let burst: Duration

    private var packetTokens: Int64
    private var byteTokens: Int64
    private let packetDepth: Int64
    private let byteDepth: Int64
    private var lastRefill: Instant?

    /// Packets refused.
    package private(set) var limitedCount = 0

    private static let scale: Int64 = 1_000_000_000

    /// Rates below zero count as zero (nothing ever passes beyond the
    /// initial burst); `burst` below zero counts as zero.
    package init(packetsPerSecond: Int, bytesPerSecond: Int, burst: Duration) {
        self.packetsPerSecond = Int64(max(packetsPerSecond, 0))
        self.bytesPerSecond = Int64(max(bytesPerSecond, 0))
        self.burst = max(burst, .zero)
        let burstNanoseconds = self.burst.nanoseconds
        packetDepth = Self.saturatingProduct(self.packetsPerSecond, burstNanoseconds)
        byteDepth = Self.saturatingProduct(self.bytesPerSecond, burstNanoseconds)
        packetTokens = packetDepth
        byteTokens = byteDepth
    }

    /// Takes one packet of `bytes` from the buckets if both have enough;
    /// `false` means do not send (or process).
    package mutating func allow(bytes: Int, now: Instant) -> Bool {
        refill(now: now)
        guard bytes >= 0 else { return false }
        let byteCost = Self.saturatingProduct(Int64(bytes), Self.scale)
        guard packetTokens >= Self.scale, byteTokens >= byteCost else {
            limitedCount &+= 1
            return false
        }
        packetTokens -= Self.scale
        byteTokens -= byteCost
        return true
    }

    private mutating func refill(now: Instant) {
        guard let last = lastRefill else {
            lastRefill = now
            return
        }
        guard now > last else { return }
        lastRefill = now
        // Past `burst` both buckets are full anyway; clamping first keeps
        // the products far from overflow.
        let elapsed = min((now - last).nanoseconds, max(burst.nanoseconds, 1))
        packetTokens = min(packetDepth, packetTokens &+ Self.saturatingProduct(packetsPerSecond, elapsed))
        byteTokens = min(byteDepth, byteTokens &+ Self.saturatingProduct(bytesPerSecond, elapsed))
    }

    private static func saturatingProduct(_ a: Int64, _ b: Int64) -> Int64 {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max / 4 : product
    }
}
