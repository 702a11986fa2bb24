import LossRecovery
import Testing
import Wire

@Suite struct RetransmissionRateLimiterTests {
    /// 10 s of a storm: 100,000 requests, one every 100 µs, each asking
    /// `allow`; returns how many passed.
    static func storm(_ allow: (Int, Instant) -> Bool) -> Int {
        var allowed = 0
        for i in 0..<100_000 where allow(1200, Instant(nanoseconds: Int64(i) * 100_000)) { allowed += 1 }
        return allowed
    }

    /// A 100 packet/s bucket 100 ms deep (10 packets) allows the 10 of the
    /// full bucket plus one per 10 ms of the 9.9999 s that follow: 10 + 999.
    @Test func aNACKStormIsBoundedByRateTimesDurationPlusBurst() {
        var limiter = RetransmissionRateLimiter(packetsPerSecond: 100, bytesPerSecond: 10_000_000, burst: .milliseconds(100))
        let allowed = Self.storm { limiter.allow(bytes: $0, now: $1) }
        #expect(allowed == 1009)
        #expect(allowed <= 100 * 10 + 10)
        #expect(limiter.limitedCount == 100_000 - 1009)
    }

    /// The buckets alone (the transport-cc feedback limit) bound a storm
    /// the same way, without the limiter's 8 KiB de-duplication table.
    @Test func theBucketPairAloneBoundsAStormTheSameWay() {
        var buckets = TokenBucketPair(packetsPerSecond: 100, bytesPerSecond: 10_000_000, burst: .milliseconds(100))
        #expect(Self.storm { buckets.allow(bytes: $0, now: $1) } == 1009)
        #expect(buckets.limitedCount == 100_000 - 1009)
        #expect(MemoryLayout<TokenBucketPair>.size < 128)
        #expect(MemoryLayout<RetransmissionRateLimiter>.size > 8192)
    }

    /// 1,000-byte packets every 1 ms for 5 s against 10,000 bytes/s with a
    /// 1 s burst: 10,000 + 10,000 × 4.999 bytes → 59 packets.
    @Test func bytesAreBoundedToo() {
        var limiter = RetransmissionRateLimiter(packetsPerSecond: 1_000_000, bytesPerSecond: 10_000, burst: .seconds(1))
        var allowed = 0
        for ms in 0..<5000 where limiter.allow(bytes: 1000, now: at(ms: Int64(ms))) { allowed += 1 }
        #expect(allowed == 59)
    }

    @Test func theBucketRefillsOnlyUpToItsDepth() {
        var limiter = RetransmissionRateLimiter(packetsPerSecond: 10, bytesPerSecond: 1_000_000, burst: .milliseconds(500))
        var allowed = 0
        // A long quiet hour, then a burst: only the 5-packet depth passes.
        _ = limiter.allow(bytes: 0, now: at(ms: 0))
        for _ in 0..<100 where limiter.allow(bytes: 100, now: at(ms: 3_600_000)) { allowed += 1 }
        #expect(allowed == 5)
    }

    @Test func aPacketLargerThanTheByteBucketIsNeverAllowed() {
        var limiter = RetransmissionRateLimiter(packetsPerSecond: 100, bytesPerSecond: 1000, burst: .seconds(1))
        var decisions: [Bool] = []
        decisions.append(limiter.allow(bytes: 1001, now: at(ms: 0)))
        decisions.append(limiter.allow(bytes: 1001, now: at(ms: 10_000)))
        decisions.append(limiter.allow(bytes: 1000, now: at(ms: 10_000)))
        decisions.append(limiter.allow(bytes: -1, now: at(ms: 10_000)))
        #expect(decisions == [false, false, true, false])
    }

    @Test func aPacketRetransmittedWithinOneRoundTripIsNotSentAgain() {
        var limiter = RetransmissionRateLimiter.video()
        let rtt = Duration.milliseconds(80)
        let a = SSRC(0xAAAA)
        var decisions: [Bool] = []
        decisions.append(limiter.shouldRetransmit(ssrc: a, sequenceNumber: 7, bytes: 1000, now: at(ms: 0), roundTripTime: rtt))
        // Within the RTT: a repeat.
        decisions.append(limiter.shouldRetransmit(ssrc: a, sequenceNumber: 7, bytes: 1000, now: at(ms: 79), roundTripTime: rtt))
        // Another SSRC with the same number is another packet.
        decisions.append(
            limiter.shouldRetransmit(ssrc: SSRC(0xBBBB), sequenceNumber: 7, bytes: 1000, now: at(ms: 79), roundTripTime: rtt))
        // One RTT later it may go again.
        decisions.append(limiter.shouldRetransmit(ssrc: a, sequenceNumber: 7, bytes: 1000, now: at(ms: 80), roundTripTime: rtt))
        // Unknown RTT: 100 ms.
        decisions.append(limiter.shouldRetransmit(ssrc: a, sequenceNumber: 7, bytes: 1000, now: at(ms: 179), roundTripTime: nil))
        #expect(decisions == [true, false, true, true, false])
        #expect(limiter.duplicateCount == 2)
    }

    /// A subscriber NACKing the same 1,000 packets every 10 ms for 2 s:
    /// each packet goes out at most once per RTT, and the total stays
    /// under the bucket's bound.
    @Test func aRepeatedStormIsDeduplicatedAndBounded() {
        var limiter = RetransmissionRateLimiter(packetsPerSecond: 200, bytesPerSecond: 250_000, burst: .milliseconds(100))
        var sentPerNumber: [UInt16: Int] = [:]
        var total = 0
        for round in 0..<200 {
            let now = at(ms: Int64(round) * 10)
            for seq in UInt16(0)..<1000
            where limiter.shouldRetransmit(
                ssrc: SSRC(1), sequenceNumber: seq, bytes: 1000, now: now, roundTripTime: .milliseconds(100))
            {
                sentPerNumber[seq, default: 0] += 1
                total += 1
            }
        }
        // Packets bind first: 20 + 200 × 1.99 s = 418 (bytes would allow
        // (25,000 + 250,000 × 1.99) / 1,000 = 522).
        #expect(total == 418)
        #expect(sentPerNumber.values.allSatisfy { $0 <= 20 })
    }

    @Test func recentRetransmissionsRemembersWhatItRecorded() {
        var recent = RecentRetransmissions()
        #expect(recent.lastSent(ssrc: SSRC(0), sequenceNumber: 0) == nil)
        recent.record(ssrc: SSRC(5), sequenceNumber: 65535, at: at(ms: 42))
        #expect(recent.lastSent(ssrc: SSRC(5), sequenceNumber: 65535) == at(ms: 42))
        #expect(recent.lastSent(ssrc: SSRC(5), sequenceNumber: 65534) == nil)
    }
}
