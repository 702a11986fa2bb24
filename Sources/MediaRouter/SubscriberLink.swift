import BandwidthEstimation
import LossRecovery
import Negotiation
import PeerSession
import RTCP
import RTP
import Wire

/// One subscriber transport as the per-packet egress reaches it: its
/// `PeerTransport` (to protect in the transmit slot) and its link,
/// resolved when the transport opens and held by each of its
/// subscriptions, so forwarding a packet looks nothing up by
/// `TransportID`.
final class SubscriberSink {
    let id: TransportID
    let transport: PeerTransport
    let link: SubscriberLink
    /// The header-extension ids written on this transport's packets: our
    /// offer's for room subscribers, the client's for a WHEP viewer
    /// (`RemoteTransportParameters.egressHeaderExtensions`), so its
    /// transport-cc feedback reports on the numbers we send.
    let extensionIDs: HeaderExtensionIDs
    init(id: TransportID, transport: PeerTransport, link: SubscriberLink, extensionIDs: HeaderExtensionIDs) {
        self.id = id
        self.transport = transport
        self.link = link
        self.extensionIDs = extensionIDs
    }
}

/// The worker's state for one subscriber transport as a whole (not per
/// track): the transport-wide sequence numbers of its egress packets and
/// what was sent with them, the send-side bandwidth estimate the
/// subscriber's feedback drives, bandwidth probes, and the allocation of
/// that estimate over the subscriber's tracks (issue #5: audio first, then
/// every video's lowest layer, then upgrades; probe before going up).
final class SubscriberLink {
    var history = SentPacketHistory(firstSequenceNumber: 1)
    var estimator = SendSideBandwidthEstimator()
    var probes = ProbeController()
    /// Bounds retransmissions to this subscriber (a NACK storm cannot
    /// multiply traffic).
    var limiter = RetransmissionRateLimiter.video()
    let allocator = BandwidthAllocator()
    /// When the allocation last ran; it runs every `allocationInterval` and
    /// at once when the subscriber's tracks or preferences change.
    var lastAllocation: Instant?
    var allocationNeeded = true
    /// This link's subscriptions, gathered by a round that works per link
    /// (allocation, reports) and emptied within it: the capacity is kept,
    /// so the rounds allocate nothing.
    var roundSubscriptions: [Subscription] = []
    static let allocationInterval: Duration = .milliseconds(200)

    /// The number the next egress packet carries (16-bit, wrapping;
    /// draft-holmer-rmcat-transport-wide-cc-extensions-01 section 2).
    func nextTransportSequenceNumber() -> UInt16 { history.nextSequenceNumber() }

    /// One packet of `size` bytes left with transport-wide number `number`.
    func sent(_ number: UInt16, size: Int, at now: Instant, kind: SentPacketKind) {
        history.sent(transportSequenceNumber: number, size: size, at: now, kind: kind)
    }

    /// Bounds transport-cc feedback processed per second (issue #12): each
    /// feedback costs a walk bounded by its bytes and by the send history,
    /// and this bounds how many walks a subscriber can ask for. libwebrtc
    /// sends one every 50 to 250 ms (more when one would not fit a packet),
    /// so 100 per second and 100 kB/s, 500 ms deep, is far above an honest
    /// receiver. The retransmission limiter's two token buckets (packets
    /// and bytes) without its de-duplication table.
    var feedbackLimiter = TokenBucketPair(
        packetsPerSecond: SubscriberLink.feedbackPerSecond, bytesPerSecond: SubscriberLink.feedbackBytesPerSecond,
        burst: .milliseconds(500))
    static let feedbackPerSecond = 100
    static let feedbackBytesPerSecond = 100_000

    /// Transport-cc feedback from the subscriber (`packet`: the bytes it
    /// was parsed from): the estimate, and the outcome of a running probe.
    /// False when the rate limit dropped it.
    func transportFeedback(_ feedback: TransportCCFeedback, packet: RawSpan, now: Instant) -> Bool {
        guard feedbackLimiter.allow(bytes: packet.byteCount, now: now) else { return false }
        let before = estimator.estimate
        estimator.transportFeedback(feedback, packet: packet, history: history, now: now)
        if case .succeeded(let rate)? = probes.transportFeedback(feedback, packet: packet, history: history, now: now) {
            estimator.probeSucceeded(rate, now: now)
        }
        if estimator.estimate != before { allocationNeeded = true }
        return true
    }

    func receiverEstimatedMaximumBitrate(_ bitrate: Bitrate, now: Instant) {
        estimator.receiverEstimatedMaximumBitrate(bitrate, now: now)
        allocationNeeded = true
    }

    func receiverReportLoss(fractionLost: UInt8, now: Instant) {
        estimator.receiverReportLoss(fractionLost: fractionLost, now: now)
    }

    /// Whether an allocation round is due.
    func allocationDue(now: Instant) -> Bool {
        allocationNeeded || lastAllocation.map { now - $0 >= Self.allocationInterval } ?? true
    }
}
