import Wire

/// Bounds what NACKs can make the server send, per subscriber transport:
/// one limiter covers every track the subscriber receives, because the
/// thing to protect is that subscriber's downlink and the server's egress.
///
/// Two token buckets, one counting packets and one counting bytes, both
/// `burst` deep (`rate × burst`) and both starting full. A retransmission
/// goes out only when both hold enough tokens. Over any interval of length
/// T the limiter therefore allows at most `packetsPerSecond × T + depth`
/// packets and `bytesPerSecond × T + depth` bytes, however many requests
/// arrive (a subscriber NACKing 1,000 packets every 10 ms gets the same
/// bound as a polite one). A packet larger than the byte bucket's depth is
/// never allowed: choose `burst` so that `bytesPerSecond × burst` exceeds
/// the largest packet.
///
/// `shouldRetransmit` adds de-duplication: a packet already retransmitted
/// to this subscriber within one round-trip time is not sent again (the
/// NACK that crossed our answer in flight), and costs no tokens.
///
/// Tokens are kept in nano-units (tokens × 10⁹) so refills are exact
/// integer arithmetic on `Instant` nanoseconds.
package struct RetransmissionRateLimiter: Sendable {
    package let packetsPerSecond: Int64
    package let bytesPerSecond: Int64
    package let burst: Duration

    private var packetTokens: Int64
    private var byteTokens: Int64
    private let packetDepth: Int64
    private let byteDepth: Int64
    private var lastRefill: Instant?
    private var recent = RecentRetransmissions()

    /// Requests refused by the buckets.
    package private(set) var limitedCount = 0
    /// Requests refused as repeats within one round-trip time.
    package private(set) var duplicateCount = 0

    private static let scale: Int64 = 1_000_000_000

    /// Rates below zero count as zero (nothing is ever allowed beyond the
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

    /// A default for video subscribers: 200 packets and 2 Mbit/s of
    /// retransmissions per second (about half the video preset's rate),
    /// 100 ms deep (20 packets, 25,000 bytes).
    package static func video() -> RetransmissionRateLimiter {
        RetransmissionRateLimiter(packetsPerSecond: 200, bytesPerSecond: 250_000, burst: .milliseconds(100))
    }

    /// Takes one packet of `bytes` from the buckets if both have enough;
    /// `false` means do not send.
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

    /// `allow`, after checking that the packet (`ssrc` is the SSRC the
    /// subscriber knows it by) was not retransmitted to this subscriber
    /// within the last round-trip time (100 ms when unknown). Records the
    /// retransmission when it is allowed.
    package mutating func shouldRetransmit(
        ssrc: SSRC, sequenceNumber: UInt16, bytes: Int, now: Instant, roundTripTime: Duration?
    ) -> Bool {
        let window = roundTripTime ?? .milliseconds(100)
        if let sent = recent.lastSent(ssrc: ssrc, sequenceNumber: sequenceNumber), now - sent < window {
            duplicateCount &+= 1
            return false
        }
        guard allow(bytes: bytes, now: now) else { return false }
        recent.record(ssrc: ssrc, sequenceNumber: sequenceNumber, at: now)
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

/// The last retransmission time of recently retransmitted packets, keyed
/// by (SSRC, sequence number), in a fixed direct-mapped table held inline
/// (no allocation). A colliding newer entry replaces an older one, so a
/// repeat can occasionally slip through de-duplication; the rate limiter
/// still bounds it.
package struct RecentRetransmissions: Sendable {
    package static let capacity = 512

    private struct Entry: Sendable {
        var key: UInt64
        var sentAt: Instant
    }

    // Keys carry bit 48 so that an all-zero entry never matches.
    private var entries: InlineArray<512, Entry> = .init(repeating: Entry(key: 0, sentAt: .zero))

    package init() {}

    @inline(__always)
    private static func key(_ ssrc: SSRC, _ sequenceNumber: UInt16) -> UInt64 {
        1 << 48 | UInt64(ssrc.rawValue) << 16 | UInt64(sequenceNumber)
    }

    @inline(__always)
    private static func position(_ key: UInt64) -> Int {
        // Fibonacci hashing spreads SSRCs and consecutive numbers alike.
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 55)
    }

    /// When this packet was last recorded, if it is still in the table.
    package func lastSent(ssrc: SSRC, sequenceNumber: UInt16) -> Instant? {
        let key = Self.key(ssrc, sequenceNumber)
        let entry = entries[Self.position(key)]
        return entry.key == key ? entry.sentAt : nil
    }

    package mutating func record(ssrc: SSRC, sequenceNumber: UInt16, at now: Instant) {
        let key = Self.key(ssrc, sequenceNumber)
        entries[Self.position(key)] = Entry(key: key, sentAt: now)
    }
}
