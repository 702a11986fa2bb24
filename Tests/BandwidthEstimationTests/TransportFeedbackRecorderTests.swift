import RTCP
import Testing
import Wire

@testable import BandwidthEstimation

@Suite struct TransportFeedbackRecorderTests {
    private let t0 = Instant(nanoseconds: 10_000_000_000)

    @Test func reportsEveryNumberSinceTheLastFeedbackWithLossesAndArrivalTimes() throws {
        var recorder = TransportFeedbackRecorder(senderSSRC: SSRC(1))
        // 1...10 every 2 ms, 5 and 6 lost.
        for n in 1...10 where n != 5 && n != 6 {
            recorder.record(transportSequenceNumber: UInt16(n), arrival: t0 + .milliseconds(2 * n))
        }
        #expect(recorder.makeFeedback(mediaSSRC: SSRC(9), now: t0 + .milliseconds(40)).isEmpty)
        let feedback = recorder.makeFeedback(mediaSSRC: SSRC(9), now: t0 + .milliseconds(52))
        try #require(feedback.count == 1)
        let f = feedback[0]
        #expect(f.senderSSRC == SSRC(1) && f.mediaSSRC == SSRC(9))
        #expect(f.baseSequenceNumber == 1)
        #expect(f.feedbackPacketCount == 0)
        let packets = f.packets
        #expect(packets.map(\.sequenceNumber) == (1...10).map { UInt16($0) })
        #expect(packets.map { $0.arrival != nil } == [true, true, true, true, false, false, true, true, true, true])
        // Arrivals 2 ms apart, rebuilt from the deltas.
        let times = packets.compactMap(\.arrival)
        #expect(zip(times, times.dropFirst()).map { $1 - $0 } == [2, 2, 2, 6, 2, 2, 2].map { .milliseconds($0) })
        // Nothing new: nothing to say.
        #expect(recorder.makeFeedback(mediaSSRC: SSRC(9), now: t0 + .milliseconds(200)).isEmpty)
        // The next feedback starts after 10 and counts up.
        recorder.record(transportSequenceNumber: 12, arrival: t0 + .milliseconds(210))
        let next = recorder.makeFeedback(mediaSSRC: SSRC(9), now: t0 + .milliseconds(260))
        #expect(next.map(\.baseSequenceNumber) == [11])
        #expect(next.first?.packets.map { $0.arrival != nil } == [false, true])
        #expect(next.first?.feedbackPacketCount == 1)
    }

    @Test func sequenceNumbersWrapAndLateOrAncientOnesAreHarmless() {
        var recorder = TransportFeedbackRecorder(senderSSRC: SSRC(1))
        for (i, n) in [UInt16(65534), 65535, 0, 1].enumerated() {
            recorder.record(transportSequenceNumber: n, arrival: t0 + .milliseconds(i))
        }
        let f = recorder.makeFeedback(mediaSSRC: SSRC(2), now: t0 + .seconds(1))
        #expect(f.count == 1)
        #expect(f.first?.packets.map(\.sequenceNumber) == [65534, 65535, 0, 1])
        // A late packet from before the last report is not reported again.
        recorder.record(transportSequenceNumber: 65535, arrival: t0 + .seconds(1))
        #expect(recorder.makeFeedback(mediaSSRC: SSRC(2), now: t0 + .seconds(2)).isEmpty)
        // A jump far ahead: only the ring's worth is reported, in bounded
        // feedback packets.
        recorder.record(transportSequenceNumber: 30000, arrival: t0 + .seconds(3))
        let far = recorder.makeFeedback(mediaSSRC: SSRC(2), now: t0 + .seconds(4))
        #expect(far.count == 1)
        #expect(far.first?.packets.count == 1)
        #expect(far.first?.baseSequenceNumber == 30000)
    }

    /// The server writes feedback with `writeFeedback` into kept storage:
    /// the bytes are those of `makeFeedback`'s packets serialized, round
    /// after round (storage reused across feedbacks of different sizes,
    /// losses, and a round long enough to need several packets).
    @Test func writtenFeedbackIsTheSerializedFeedback() {
        var written = TransportFeedbackRecorder(senderSSRC: SSRC(1))
        var built = TransportFeedbackRecorder(senderSSRC: SSRC(1))
        var number: UInt16 = 65000
        var now = t0
        var packetsSeen = 0
        for round in 0..<40 {
            // Round 20 has a 9 s jump between two arrivals, more than a
            // 16-bit delta of 250 us holds: two packets.
            let count = 5 + round % 17
            for k in 0..<count {
                if (k + round) % 7 != 3 {
                    let jump: Duration = round == 20 && k >= count / 2 ? .seconds(9) : .zero
                    let at = now + .milliseconds(Int64(k)) + jump
                    written.record(transportSequenceNumber: number, arrival: at)
                    built.record(transportSequenceNumber: number, arrival: at)
                }
                number &+= 1
            }
            now = now + .milliseconds(round == 20 ? 9500 : 50)
            var bytes: [[UInt8]] = []
            let n = written.writeFeedback(mediaSSRC: SSRC(9), now: now) { bytes.append(Array($0)) }
            let expected = built.makeFeedback(mediaSSRC: SSRC(9), now: now).map {
                RTCPCompoundPacket.serialize([.transportLayerCC($0)])
            }
            #expect(n == bytes.count)
            #expect(bytes == expected, "round \(round)")
            packetsSeen += bytes.count
        }
        #expect(packetsSeen > 40)
    }
}
