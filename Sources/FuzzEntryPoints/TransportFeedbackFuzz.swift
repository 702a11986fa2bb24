import BandwidthEstimation
import RTCP
import Wire

extension FuzzEntryPoints {
    /// Transport-cc feedback through the walker the media worker uses.
    /// The first 4 bytes shape the send history (first transport-wide
    /// number, packets sent, spacing); the rest is an RTCP compound. Every
    /// transport-cc feedback in it goes to a send-side estimator and a
    /// probe controller as `SubscriberLink` hands it on, and must walk no
    /// more statuses than the history holds, keep the estimate within its
    /// limits, and walk identically from any start position.
    public static func transportFeedback(_ data: UnsafeRawBufferPointer) {
        guard data.count >= 4 else { return }
        let first = UInt16(data[0]) << 8 | UInt16(data[1])
        let sent = Int(data[2]) * 40
        let spacing = Duration.microseconds(Int64(data[3]) * 100 + 100)
        let body = UnsafeRawBufferPointer(rebasing: data[4...])
        guard let compound = try? RTCPCompoundPacket.parse(RawSpan(_unsafeBytes: body)) else { return }

        var history = SentPacketHistory(capacity: 1024, firstSequenceNumber: first)
        var estimator = SendSideBandwidthEstimator()
        var prober = ProbeController()
        var now = Instant(nanoseconds: 1_000_000_000)
        prober.request(target: .mbps(2), estimate: estimator.estimate, usage: estimator.usage, now: now)
        for i in 0..<sent {
            let kind: SentPacketKind = prober.poll(now: now) != nil ? .probe : .media
            history.sent(transportSequenceNumber: history.nextSequenceNumber(), size: 200 + i % 1000, at: now, kind: kind)
            now += spacing
        }
        let held = min(sent, history.capacity)
        for (packet, range) in zip(compound.packets, compound.packetRanges) {
            guard case .transportCCFeedback(let feedback) = packet else { continue }
            let bytes = UnsafeRawBufferPointer(rebasing: body[range])
            checkTransportFeedbackWalk(feedback, packet: bytes)
            let before = estimator.statusesVisited
            estimator.transportFeedback(feedback, packet: RawSpan(_unsafeBytes: bytes), history: history, now: now)
            precondition(estimator.statusesVisited - before <= held, "walked statuses the history cannot hold")
            precondition(
                estimator.estimate >= estimator.configuration.minimum
                    && estimator.estimate <= estimator.configuration.maximum)
            if case .succeeded(let rate)? = prober.transportFeedback(
                feedback, packet: RawSpan(_unsafeBytes: bytes), history: history, now: now)
            {
                estimator.probeSucceeded(rate, now: now)
            }
            now += .milliseconds(50)
        }
    }

    /// A full walk visits `statusCount` statuses with `receivedCount`
    /// deltas, in sequence order from the base; a walk from any position
    /// gives the same results as the full walk from there.
    static func checkTransportFeedbackWalk(_ feedback: TransportCCFeedback, packet: UnsafeRawBufferPointer) {
        let span = RawSpan(_unsafeBytes: packet)
        precondition(feedback.chunks.lowerBound == 20 && feedback.chunks.upperBound == feedback.deltas.lowerBound)
        precondition(feedback.deltas.upperBound <= packet.count)
        var walker = feedback.statuses(in: span)
        var received = 0
        var position = 0
        // A start position derived from the packet, so both halves of a
        // chunk get exercised.
        let middle = feedback.statusCount == 0 ? 0 : Int(packet[packet.count - 1]) * 257 % feedback.statusCount
        var fromMiddle = feedback.statuses(in: span, positions: middle..<feedback.statusCount)
        while let result = walker.next() {
            precondition(result.sequenceNumber == feedback.baseSequenceNumber &+ UInt16(truncatingIfNeeded: position))
            precondition((result.arrival == nil) == (result.status == .notReceived))
            if result.arrival != nil { received += 1 }
            if position >= middle { precondition(fromMiddle.next() == result, "walk from a position differs") }
            position += 1
        }
        precondition(fromMiddle.next() == nil)
        precondition(position == feedback.statusCount && walker.visited == position)
        precondition(received == feedback.receivedCount)
    }
}
