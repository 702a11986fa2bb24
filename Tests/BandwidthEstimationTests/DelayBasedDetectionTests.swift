import BandwidthEstimation
import RTCP
import Testing
import Wire

@Suite struct DelayBasedDetectionTests {
    /// Sends `count` packets 10 ms apart and reports them all in one
    /// feedback per 10 packets, arriving `arrivalSpacing` apart.
    static func feed(
        arrivalSpacing: Duration, count: Int = 60, firstSequenceNumber: UInt16 = 0
    )
        -> SendSideBandwidthEstimator
    {
        var estimator = SendSideBandwidthEstimator()
        var history = SentPacketHistory(firstSequenceNumber: firstSequenceNumber)
        let t0 = Instant(nanoseconds: 1_000_000_000)
        var arrivals: [TransportCCArrival] = []
        for i in 0..<count {
            let seq = history.nextSequenceNumber()
            let sent = t0 + .milliseconds(Int64(i) * 10)
            history.sent(transportSequenceNumber: seq, size: 1200, at: sent, kind: .media)
            arrivals.append(TransportCCArrival(sequenceNumber: seq, arrival: t0 + .milliseconds(50) + arrivalSpacing * i))
            if arrivals.count == 10 {
                let feedback = TransportLayerCC.build(
                    senderSSRC: SSRC(rawValue: 1), mediaSSRC: SSRC(rawValue: 2),
                    feedbackPacketCount: UInt8(truncatingIfNeeded: i / 10), arrivals: arrivals
                ).feedback
                estimator.transportFeedback(feedback, history: history, now: sent + .milliseconds(100))
                arrivals = []
            }
        }
        return estimator
    }

    @Test func growingQueueIsOverUse() {
        // 1200 bytes per 16 ms arrive: 600 kbit/s acknowledged, so the
        // decrease lands near 0.85 × 600k.
        let estimator = Self.feed(arrivalSpacing: .milliseconds(16))
        #expect(estimator.usage == .overusing)
        #expect(estimator.estimate < .kbps(550))
        #expect(estimator.estimate > .kbps(450))
    }

    @Test func drainingQueueIsUnderUse() {
        let estimator = Self.feed(arrivalSpacing: .milliseconds(8))
        #expect(estimator.usage == .underusing)
    }

    @Test func steadyDelayIsNormalAndTheEstimateGrows() {
        let estimator = Self.feed(arrivalSpacing: .milliseconds(10))
        #expect(estimator.usage == .normal)
        #expect(estimator.estimate > .kbps(600))
    }

    @Test func detectionIsUnchangedAcrossTheSixteenBitWrap() {
        let wrapped = Self.feed(arrivalSpacing: .milliseconds(12), firstSequenceNumber: 65510)
        let plain = Self.feed(arrivalSpacing: .milliseconds(12))
        #expect(wrapped.usage == .overusing)
        #expect(wrapped.estimate == plain.estimate)
    }

    @Test func convergesAcrossManySequenceNumberWraps() {
        var session = CongestionSession(link: SimulatedLink(capacity: .mbps(2)))
        session.history = SentPacketHistory(firstSequenceNumber: 65000)
        session.run(for: .seconds(30))
        // About 6000 packets: the 16-bit counter wrapped on the way.
        let mean = session.meanEstimate(last: .seconds(5))
        #expect(mean >= 1_400_000, "mean \(mean)")
        #expect(mean <= 2_100_000, "mean \(mean)")
    }
}
