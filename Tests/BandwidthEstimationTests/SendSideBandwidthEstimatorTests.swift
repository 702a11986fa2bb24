import BandwidthEstimation
import RTCP
import SFUTesting
import Testing
import Wire

@Suite struct SendSideBandwidthEstimatorTests {
    @Test(arguments: [Int64(500), 2000, 8000])
    func convergesNearLinkCapacity(kilobits: Int64) {
        var session = CongestionSession(link: SimulatedLink(capacity: .kbps(kilobits)))
        session.run(for: .seconds(60))
        let mean = session.meanEstimate(last: .seconds(10))
        let capacity = Double(kilobits * 1000)
        #expect(mean >= 0.7 * capacity, "mean \(mean)")
        #expect(mean <= 1.05 * capacity, "mean \(mean)")
    }

    @Test func capacityDropBringsEstimateDownWithinTwoSeconds() {
        var session = CongestionSession(
            estimator: SendSideBandwidthEstimator(configuration: .init(initial: .mbps(3))),
            link: SimulatedLink(capacity: .mbps(3)))
        session.run(for: .seconds(20))
        #expect(session.estimator.estimate > .mbps(2))
        session.link.capacity = .kbps(500)
        let dropAt = session.now
        session.run(for: .seconds(2))
        let firstBelow = session.trace.first { $0.at > dropAt && $0.estimate < .kbps(600) }
        #expect(firstBelow != nil)
        #expect(session.estimator.estimate < .kbps(600))
    }

    @Test func fivePercentRandomLossDoesNotCollapseTheEstimate() {
        var session = CongestionSession(link: SimulatedLink(capacity: .mbps(2)))
        session.run(for: .seconds(30))
        let before = session.meanEstimate(last: .seconds(5))
        session.link.randomLoss = 0.05
        session.run(for: .seconds(20))
        let after = session.meanEstimate(last: .seconds(5))
        #expect(after >= 0.7 * before, "before \(before) after \(after)")
        #expect(after >= 1_000_000, "after \(after)")
    }

    @Test func twentyPercentLossReducesTheEstimate() {
        var session = CongestionSession(link: SimulatedLink(capacity: .mbps(2)))
        session.run(for: .seconds(30))
        let before = session.meanEstimate(last: .seconds(5))
        session.link.randomLoss = 0.2
        session.run(for: .seconds(5))
        #expect(Double(session.estimator.estimate.bitsPerSecond) < 0.5 * before)
    }

    @Test func startsAtTheConfiguredInitialEstimateWithinLimits() {
        #expect(SendSideBandwidthEstimator().estimate == .kbps(600))
        let low = SendSideBandwidthEstimator(configuration: .init(initial: .kbps(1), minimum: .kbps(30)))
        #expect(low.estimate == .kbps(30))
        let high = SendSideBandwidthEstimator(configuration: .init(initial: .mbps(50), maximum: .mbps(20)))
        #expect(high.estimate == .mbps(20))
    }

    @Test func rembDrivesTheEstimateWithoutTransportFeedback() {
        var estimator = SendSideBandwidthEstimator()
        estimator.receiverEstimatedMaximumBitrate(.kbps(1500), now: Instant(nanoseconds: 1_000_000_000))
        #expect(estimator.estimate == .kbps(1500))
        estimator.receiverEstimatedMaximumBitrate(.kbps(300), now: Instant(nanoseconds: 2_000_000_000))
        #expect(estimator.estimate == .kbps(300))
        // Clamped to the configured limits.
        estimator.receiverEstimatedMaximumBitrate(.kbps(1), now: Instant(nanoseconds: 3_000_000_000))
        #expect(estimator.estimate == .kbps(30))
        estimator.receiverEstimatedMaximumBitrate(.mbps(100), now: Instant(nanoseconds: 4_000_000_000))
        #expect(estimator.estimate == .mbps(20))
    }

    @Test func receiverReportLossLowersTheRembEstimate() {
        var estimator = SendSideBandwidthEstimator()
        let t0 = Instant(nanoseconds: 1_000_000_000)
        estimator.receiverEstimatedMaximumBitrate(.mbps(1), now: t0)
        // 64/256 = 25 % loss: 1 Mbit/s × (1 − 0.125).
        estimator.receiverReportLoss(fractionLost: 64, now: t0 + .milliseconds(100))
        #expect(estimator.estimate == .kbps(875))
        // A second report within 300 ms does not decrease again.
        estimator.receiverReportLoss(fractionLost: 64, now: t0 + .milliseconds(200))
        #expect(estimator.estimate == .kbps(875))
    }

    @Test func rembCapsTransportFeedbackEstimateWhileBothAreFresh() {
        var session = CongestionSession(link: SimulatedLink(capacity: .mbps(4)))
        session.run(for: .seconds(10))
        #expect(session.estimator.estimate > .kbps(700))
        session.estimator.receiverEstimatedMaximumBitrate(.kbps(400), now: session.now)
        #expect(session.estimator.estimate == .kbps(400))
    }

    @Test func rembTakesOverWhenTransportFeedbackStops() {
        var session = CongestionSession(link: SimulatedLink(capacity: .mbps(4)))
        session.run(for: .seconds(10))
        let last = session.now
        var estimator = session.estimator
        // Within the feedback timeout, REMB only caps: a higher one changes nothing.
        let before = estimator.estimate
        estimator.receiverEstimatedMaximumBitrate(.mbps(3), now: last + .seconds(1))
        #expect(estimator.estimate == min(before, .mbps(3)))
        // After it, REMB is the estimate.
        estimator.receiverEstimatedMaximumBitrate(.mbps(3), now: last + .seconds(3))
        #expect(estimator.estimate == .mbps(3))
    }

    @Test func feedbackForUnknownOrOldSequenceNumbersIsIgnored() {
        var estimator = SendSideBandwidthEstimator()
        var history = SentPacketHistory(capacity: 16)
        let t0 = Instant(nanoseconds: 1_000_000_000)
        for i in 0..<40 {
            let seq = history.nextSequenceNumber()
            history.sent(transportSequenceNumber: seq, size: 1200, at: t0 + .milliseconds(Int64(i)), kind: .media)
        }
        // 0 ... 23 have been overwritten; 1000 ... were never sent.
        let old = TransportLayerCC(
            senderSSRC: SSRC(rawValue: 1), mediaSSRC: SSRC(rawValue: 2), baseSequenceNumber: 0, referenceTime: 0,
            feedbackPacketCount: 0, statuses: Array(repeating: .notReceived, count: 20))
        estimator.transportFeedback(old, history: history, now: t0 + .milliseconds(200))
        let unknown = TransportLayerCC(
            senderSSRC: SSRC(rawValue: 1), mediaSSRC: SSRC(rawValue: 2), baseSequenceNumber: 1000, referenceTime: 0,
            feedbackPacketCount: 1, statuses: Array(repeating: .notReceived, count: 200))
        estimator.transportFeedback(unknown, history: history, now: t0 + .milliseconds(300))
        #expect(estimator.estimate == .kbps(600))
        #expect(estimator.usage == .normal)
        #expect(estimator.acknowledgedBitrate == nil)
        // Nothing counted as fresh feedback: REMB still drives the estimate.
        estimator.receiverEstimatedMaximumBitrate(.kbps(900), now: t0 + .milliseconds(400))
        #expect(estimator.estimate == .kbps(900))
    }

    @Test func malformedFeedbackNeverTraps() {
        var estimator = SendSideBandwidthEstimator()
        var history = SentPacketHistory(capacity: 256)
        var rng = SeededRandom(seed: 7)
        var now = Instant(nanoseconds: 1_000_000_000)
        for round in 0..<400 {
            for _ in 0..<10 {
                let seq = history.nextSequenceNumber()
                history.sent(transportSequenceNumber: seq, size: Int(rng.next() % 1500), at: now, kind: .media)
                now += .milliseconds(Int64(rng.next() % 5))
            }
            var statuses: [TransportCCStatus] = []
            for _ in 0..<Int(rng.next() % 40) {
                switch rng.next() % 4 {
                case 0: statuses.append(.notReceived)
                case 1: statuses.append(.receivedSmallDelta(UInt8(truncatingIfNeeded: rng.next())))
                default: statuses.append(.receivedLargeDelta(Int16(truncatingIfNeeded: rng.next())))
                }
            }
            // Reference times anywhere in the 24-bit signed range, jumping.
            let reference = Int32(truncatingIfNeeded: rng.next() % (1 << 24)) - (1 << 23)
            let feedback = TransportLayerCC(
                senderSSRC: SSRC(rawValue: 1), mediaSSRC: SSRC(rawValue: 2),
                baseSequenceNumber: UInt16(truncatingIfNeeded: rng.next() % 3 == 0 ? rng.next() : UInt64(round * 10)),
                referenceTime: reference, feedbackPacketCount: UInt8(truncatingIfNeeded: round), statuses: statuses)
            estimator.transportFeedback(feedback, history: history, now: now)
            #expect(estimator.estimate >= .kbps(30))
            #expect(estimator.estimate <= .mbps(20))
        }
    }

    @Test func feedbackSurvivesTheWireRoundTrip() throws {
        var history = SentPacketHistory()
        let t0 = Instant(nanoseconds: 5_000_000_000)
        var arrivals: [TransportCCArrival] = []
        for i in 0..<30 {
            let seq = history.nextSequenceNumber()
            let sent = t0 + .milliseconds(Int64(i) * 5)
            history.sent(transportSequenceNumber: seq, size: 1000, at: sent, kind: .media)
            arrivals.append(TransportCCArrival(sequenceNumber: seq, arrival: i == 3 ? nil : sent + .milliseconds(50)))
        }
        let bytes = RTCPBuilders.transportFeedback(
            sender: SSRC(rawValue: 1), media: SSRC(rawValue: 2), count: 0, arrivals: arrivals)
        let parsed = try RTCPCompoundPacket.parse(bytes.span.bytes)
        guard case .transportCCFeedback(let feedback) = try #require(parsed.packets.first) else {
            Issue.record("not TWCC")
            return
        }
        var estimator = SendSideBandwidthEstimator()
        estimator.transportFeedback(feedback, packet: bytes.span.bytes, history: history, now: t0 + .milliseconds(300))
        // 29 × 1000 bytes over 145 ms of arrivals.
        let acknowledged = try #require(estimator.acknowledgedBitrate)
        #expect(acknowledged == Bitrate(bitsPerSecond: 1_600_000))
        #expect(estimator.usage == .normal)
    }
}
