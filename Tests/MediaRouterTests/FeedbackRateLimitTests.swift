import RTCP
import Testing
import Wire

@testable import MediaRouter

/// Issue #12, defect 3: transport-cc feedback processed per subscriber
/// transport is bounded per second; the rest is dropped and counted.
@Suite struct FeedbackRateLimitTests {
    @Test func feedbackBeyondTheRateLimitIsNotProcessed() {
        let link = SubscriberLink()
        let bytes = TransportLayerCC(
            senderSSRC: SSRC(1), mediaSSRC: SSRC(2), baseSequenceNumber: 1, referenceTime: 0, feedbackPacketCount: 0,
            statuses: [.receivedSmallDelta(4), .notReceived]
        ).serialized()
        guard let feedback = TransportCCFeedback.parsedPacket(bytes.span.bytes) else {
            Issue.record("feedback did not parse")
            return
        }
        let t0 = Instant(nanoseconds: 5_000_000_000)
        func flood(at now: Instant) -> Int {
            (0..<1000).filter { _ in link.transportFeedback(feedback, packet: bytes.span.bytes, now: now) }.count
        }
        // 100 per second, 500 ms deep: a burst of 50, then 50 per half second.
        #expect(flood(at: t0) == 50)
        #expect(flood(at: t0 + .milliseconds(100)) == 10)
        #expect(flood(at: t0 + .seconds(5)) == 50)
        // An honest receiver (every 50 ms) never meets the limit.
        let start = t0 + .seconds(10)
        let honest = (0..<200).filter { i in
            link.transportFeedback(feedback, packet: bytes.span.bytes, now: start + .milliseconds(Int64(i) * 50))
        }.count
        #expect(honest == 200)
    }
}
