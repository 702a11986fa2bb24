import Wire

/// Bounds what NACKs can make the server send, per subscriber transport:
/// one limiter covers every track the subscriber receives, because the
/// thing to protect is that subscriber's downlink and the server's egress.
///
/// A `TokenBucketPair` (packets and bytes): a retransmission goes out only
/// when both hold enough tokens, however many requests arrive (a
/// subscriber NACKing 1,000 packets every 10 ms gets the same bound as a
/// polite one).
///
/// `shouldRetransmit` adds de-duplication: a packet already retransmitted
/// to this subscriber within one round-trip time is not sent again (the
/// NACK that crossed our answer in flight), and costs no tokens. Its table
/// (`RecentRetransmissions`, 8 KiB inline) is what a plain rate limit,
/// such as the transport-cc feedback limit, does without.
package struct RetransmissionRateLimiter: Sendable {
    private var buckets: TokenBucketPair
    private var recent = RecentRetransmissions()

    package var packetsPerSecond: Int64 { buckets.packetsPerSecond }
    package var bytesPerSecond: Int64 { buckets.bytesPerSecond }
    package var burst: Duration { buckets.burst }
    /// Requests refused by the buckets.
    package var limitedCount: Int { buckets.limitedCount }
    /// Requests refused as repeats within one round-trip time.
    package private(set) var duplicateCount = 0

    /// Rates below zero count as zero (nothing is ever allowed beyond the
    /// initial burst); `burst` below zero counts as zero.
    package init(packetsPerSecond: Int, bytesPerSecond: Int, burst: Duration) {
        buckets = TokenBucketPair(packetsPerSecond: packetsPerSecond, bytesPerSecond: bytesPerSecond, burst: burst)
    }

    /// A default for video subscribers: 200 packets and 2 Mbit/s of
    /// retransmissions per second (about half the video preset's rate),
    /// 100 ms deep (20 packets, 25,000 bytes).
    package static func video() -> RetransmissionRateLimiter {
        RetransmissionRateLimiter(packetsPerSecond: 200, bytesPerSecond: 250_000, burst: .milliseconds(100))
    }

    /// Takes one packet of `bytes` from the buckets if both have enough;
    /// `false` means do not send.
    package mutating func allow(bytes: Int, now: Instant) -> Bool { buckets.allow(bytes: bytes, now: now) }

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
