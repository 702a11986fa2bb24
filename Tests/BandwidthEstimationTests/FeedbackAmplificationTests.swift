import BandwidthEstimation
import RTCP
import Testing
import Wire

/// Issue #12, defect 3: a feedback of a few bytes can claim 65,535
/// statuses. What one feedback costs must be bounded by what we sent.
@Suite struct FeedbackAmplificationTests {
    /// A transport-cc packet of `count` statuses, all "not received", in
    /// run-length chunks of 8191 (the draft's longest run): 40 bytes for
    /// 65,535 statuses.
    static func notReceived(base: UInt16, count: Int) -> [UInt8] {
        var bytes: [UInt8] = [0x8F, 205, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2]
        bytes += [UInt8(base >> 8), UInt8(base & 0xFF), UInt8(count >> 8), UInt8(count & 0xFF), 0, 0, 1, 0]
        var left = count
        while left > 0 {
            let run = min(left, 8191)
            bytes += [UInt8(run >> 8), UInt8(run & 0xFF)]
            left -= run
        }
        while bytes.count % 4 != 0 { bytes.append(0) }
        let words = bytes.count / 4 - 1
        bytes[2] = UInt8(words >> 8)
        bytes[3] = UInt8(words & 0xFF)
        return bytes
    }

    static func parsed(_ bytes: [UInt8]) -> TransportCCFeedback? { TransportCCFeedback.parsedPacket(bytes.span.bytes) }

    static func history(sent: Int, first: UInt16 = 1) -> SentPacketHistory {
        var history = SentPacketHistory(firstSequenceNumber: first)
        for i in 0..<sent {
            history.sent(
                transportSequenceNumber: history.nextSequenceNumber(), size: 1000,
                at: Instant(nanoseconds: 1_000_000_000 + Int64(i) * 5_000_000), kind: .media)
        }
        return history
    }

    @Test func maximumStatusCountWalksOnlyWhatWasSent() throws {
        let bytes = Self.notReceived(base: 1, count: 65535)
        #expect(bytes.count == 40)
        let feedback = try #require(Self.parsed(bytes))
        #expect(feedback.statusCount == 65535)
        let history = Self.history(sent: 100)
        var estimator = SendSideBandwidthEstimator()
        estimator.transportFeedback(
            feedback, packet: bytes.span.bytes, history: history, now: Instant(nanoseconds: 2_000_000_000))
        // 100 packets sent: 100 statuses can refer to them, not 65,535.
        #expect(estimator.statusesVisited == 100)
        var prober = ProbeController()
        prober.request(
            target: .mbps(2), estimate: estimator.estimate, usage: estimator.usage,
            now: Instant(nanoseconds: 2_000_000_000))
        _ = prober.transportFeedback(
            feedback, packet: bytes.span.bytes, history: history, now: Instant(nanoseconds: 2_000_000_000))
    }

    @Test func repeatedFeedbackWalksNothingNew() throws {
        let bytes = Self.notReceived(base: 1, count: 65535)
        let feedback = try #require(Self.parsed(bytes))
        let history = Self.history(sent: 50)
        var estimator = SendSideBandwidthEstimator()
        for i in 0..<1000 {
            estimator.transportFeedback(
                feedback, packet: bytes.span.bytes, history: history,
                now: Instant(nanoseconds: 2_000_000_000 + Int64(i) * 1_000_000))
        }
        #expect(estimator.statusesVisited == 50)
    }

    @Test func feedbackForNumbersNeverSentWalksNothing() throws {
        let history = Self.history(sent: 200, first: 1000)
        // Ahead of the newest number sent (1199), and far behind the oldest.
        for base: UInt16 in [1200, 30000, 40000] {
            let bytes = Self.notReceived(base: base, count: 20000)
            let feedback = try #require(Self.parsed(bytes))
            var estimator = SendSideBandwidthEstimator()
            estimator.transportFeedback(
                feedback, packet: bytes.span.bytes, history: history, now: Instant(nanoseconds: 3_000_000_000))
            #expect(estimator.statusesVisited == 0, "base \(base)")
            #expect(estimator.estimate == SendSideBandwidthEstimator().estimate)
        }
    }

    @Test func positionsAreTheFeedbackWindowTheHistoryHolds() {
        var history = SentPacketHistory(capacity: 16, firstSequenceNumber: 65530)
        #expect(history.positions(base: 65530, count: 100) == 0..<0)
        for _ in 0..<40 {
            history.sent(transportSequenceNumber: history.nextSequenceNumber(), size: 1, at: .zero, kind: .media)
        }
        // Sent 65530 ... 65535, 0 ... 33 (40 numbers); the ring holds the
        // last 16: 18 ... 33.
        #expect(history.positions(base: 65530, count: 65535) == 24..<40)
        #expect(history.positions(base: 20, count: 5) == 0..<5)
        #expect(history.positions(base: 30, count: 100) == 0..<4)
        #expect(history.positions(base: 30, count: 100, after: (1 << 17) + 31) == 2..<4)
        #expect(history.positions(base: 34, count: 100) == 0..<0)
        #expect(history.positions(base: 0, count: 10) == 0..<0)
    }
}
