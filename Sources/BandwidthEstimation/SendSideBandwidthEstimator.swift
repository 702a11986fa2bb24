import RTCP
import Wire

/// Limits and starting point of a subscriber's estimate.
package struct BandwidthEstimatorConfiguration: Sendable, Equatable {
    /// Where a new subscriber starts. 600 kbit/s is mediasoup's default
    /// initial available outgoing bitrate: enough for audio and one
    /// low-layer video, low enough not to flood a poor link at once.
    package var initial: Bitrate
    package var minimum: Bitrate
    package var maximum: Bitrate
    /// Transport-wide feedback older than this no longer drives the
    /// estimate; REMB and receiver-report loss take over.
    package var feedbackTimeout: Duration
    /// A REMB older than this no longer caps or drives the estimate.
    package var rembTimeout: Duration

    package init(
        initial: Bitrate = .kbps(600), minimum: Bitrate = .kbps(30), maximum: Bitrate = .mbps(20),
        feedbackTimeout: Duration = .seconds(2), rembTimeout: Duration = .seconds(5)
    ) {
        self.initial = initial
        self.minimum = minimum
        self.maximum = maximum
        self.feedbackTimeout = feedbackTimeout
        self.rembTimeout = rembTimeout
    }
}

/// A GCC-style send-side bandwidth estimate for one subscriber transport
/// (draft-ietf-rmcat-gcc-02), driven by transport-wide congestion control
/// feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01), with REMB
/// (draft-alvestrand-rmcat-remb-03) and receiver-report loss as fallback.
///
/// Two controllers, combined by taking the lower (section 4):
/// - delay-based: feedback packets are mapped to their send time and size
///   through `SentPacketHistory`, grouped into 5 ms bursts
///   (`InterArrivalDelta`), their delay gradients filtered into a trend
///   (`TrendlineEstimator`) and judged against an adaptive threshold; the
///   verdict drives AIMD (`AIMDRateControl`), bounded by the acknowledged
///   bitrate;
/// - loss-based (`LossBasedControl`): the fraction of packets the feedback
///   reports lost, over at least 20 packets, or the RR's fraction lost.
///
/// Sources, by freshness:
/// - transport-cc feedback within `feedbackTimeout`: delay-based AIMD,
///   capped by a fresh REMB when one exists (a receiver that says "no more
///   than this" is believed), and by the loss-based rate;
/// - else a REMB within `rembTimeout`: the REMB value, capped by loss (RR);
/// - else the last delay-based value holds, capped by loss.
///
/// Each feedback packet's statuses are processed once: entries at or
/// before the newest sequence number already processed (duplicates,
/// overlapping feedback, a late "received" after "lost") are skipped, as
/// are numbers the history does not hold; they are not even walked
/// (`SentPacketHistory.positions`). Processing a feedback allocates
/// nothing in steady state.
package struct SendSideBandwidthEstimator: Sendable {
    package let configuration: BandwidthEstimatorConfiguration

    /// The combined estimate, within the configured limits.
    package private(set) var estimate: Bitrate
    /// The over-use detector's latest verdict.
    package var usage: BandwidthUsage { trendline.usage }
    /// Bits per second the receiver acknowledged over the last 500 ms of
    /// feedback, nil before there is enough.
    package var acknowledgedBitrate: Bitrate? {
        acknowledged.rate.map { Bitrate(bitsPerSecond: Self.bits($0)) }
    }
    /// Send time of the newest packet a feedback acknowledged, to the
    /// feedback's arrival: a round-trip time plus the receiver's feedback
    /// delay, smoothed.
    package private(set) var roundTripTime: Duration = .milliseconds(200)

    private var interArrival = InterArrivalDelta()
    private var trendline = TrendlineEstimator()
    private var acknowledged = AcknowledgedBitrate()
    private var rateControl: AIMDRateControl
    private var loss: LossBasedControl
    private var delayBased: Double
    private var newestProcessed: Int64?
    private var lastFeedback: Instant?
    private var remb: (bitrate: Double, at: Instant)?
    private var lostSinceLossUpdate = 0
    private var expectedSinceLossUpdate = 0
    /// Feedback statuses walked so far, over every feedback: bounded by the
    /// packets sent, whatever the feedback claimed.
    package private(set) var statusesVisited = 0

    static let lossWindowPackets = 20

    package init(configuration: BandwidthEstimatorConfiguration = BandwidthEstimatorConfiguration()) {
        self.configuration = configuration
        let minimum = Double(max(configuration.minimum.bitsPerSecond, 1))
        let maximum = max(Double(configuration.maximum.bitsPerSecond), minimum)
        let initial = min(max(Double(configuration.initial.bitsPerSecond), minimum), maximum)
        rateControl = AIMDRateControl(initial: initial, minimum: minimum, maximum: maximum)
        loss = LossBasedControl()
        delayBased = initial
        estimate = Bitrate(bitsPerSecond: Self.bits(initial))
    }

    /// Feeds one transport-wide feedback packet received at `now`:
    /// `packet` holds the bytes `feedback` was parsed from. Only statuses
    /// the history can hold and not yet processed are walked
    /// (`SentPacketHistory.positions`), in place; nothing is allocated.
    package mutating func transportFeedback(
        _ feedback: TransportCCFeedback, packet: RawSpan, history: SentPacketHistory, now: Instant
    ) {
        let positions = history.positions(
            base: feedback.baseSequenceNumber, count: feedback.statusCount, after: newestProcessed)
        var walker = feedback.statuses(in: packet, positions: positions)
        var lost = 0
        var receivedCount = 0
        var newestSend: Instant?
        // Feedback lists packets in sequence order, which is sending order.
        while let result = walker.next() {
            guard let sent = history.packet(result.sequenceNumber) else { continue }
            if let newestProcessed, sent.sequenceNumber <= newestProcessed { continue }
            newestProcessed = sent.sequenceNumber
            guard let arrival = result.arrival?.nanoseconds else {
                lost += 1
                continue
            }
            receivedCount += 1
            acknowledged.add(arrival: arrival, size: sent.size)
            newestSend = max(newestSend ?? sent.sentAt, sent.sentAt)
            if let delta = interArrival.add(send: sent.sentAt.nanoseconds, arrival: arrival, size: sent.size) {
                _ = trendline.update(
                    arrivalDelta: Double(delta.arrivalDelta) / 1e6, sendDelta: Double(delta.sendDelta) / 1e6,
                    arrival: Double(delta.arrival) / 1e6)
            }
        }
        statusesVisited &+= walker.visited
        guard receivedCount > 0 || lost > 0 else { return }
        lastFeedback = now
        acknowledged.update()
        if let newestSend { observeRoundTrip(now - newestSend) }

        if receivedCount > 0 {
            rateControl.update(
                usage: trendline.usage, acknowledged: acknowledged.rate, roundTrip: roundTripTime, now: now)
            delayBased = rateControl.rate
        }

        lostSinceLossUpdate += lost
        expectedSinceLossUpdate += receivedCount + lost
        if expectedSinceLossUpdate >= Self.lossWindowPackets {
            let fraction = Double(lostSinceLossUpdate) / Double(expectedSinceLossUpdate)
            loss.update(fraction: fraction, estimate: Double(estimate.bitsPerSecond), now: now)
            lostSinceLossUpdate = 0
            expectedSinceLossUpdate = 0
        }
        combine(now: now)
    }

    /// Feeds a built feedback value (simulations, tests): it is serialized
    /// and parsed, then walked as feedback from the wire is.
    package mutating func transportFeedback(_ feedback: TransportLayerCC, history: SentPacketHistory, now: Instant) {
        let bytes = feedback.serialized()
        guard let parsed = TransportCCFeedback.parsedPacket(bytes.span.bytes) else { return }
        transportFeedback(parsed, packet: bytes.span.bytes, history: history, now: now)
    }

    /// Feeds a REMB value received at `now`.
    package mutating func receiverEstimatedMaximumBitrate(_ bitrate: Bitrate, now: Instant) {
        remb = (Double(max(bitrate.bitsPerSecond, 0)), now)
        combine(now: now)
    }

    /// Feeds a receiver report's fraction lost (RFC 3550 section 6.4.1,
    /// fixed point over 256). Ignored while transport-cc feedback is fresh,
    /// which measures loss itself.
    package mutating func receiverReportLoss(fractionLost: UInt8, now: Instant) {
        guard !feedbackIsFresh(now) else { return }
        loss.update(fraction: Double(fractionLost) / 256, estimate: Double(estimate.bitsPerSecond), now: now)
        combine(now: now)
    }

    /// A probe cluster showed the path carries `bitrate`: raise the
    /// delay-based and loss-based rates to it when higher, unless the
    /// detector sees queues building right now.
    package mutating func probeSucceeded(_ bitrate: Bitrate, now: Instant) {
        guard trendline.usage != .overusing else { return }
        let value = Double(max(bitrate.bitsPerSecond, 0))
        rateControl.raise(to: value)
        delayBased = rateControl.rate
        if let cap = loss.rate, cap < value { loss = LossBasedControl() }
        combine(now: now)
    }

    private func feedbackIsFresh(_ now: Instant) -> Bool {
        guard let lastFeedback else { return false }
        return now - lastFeedback <= configuration.feedbackTimeout
    }

    private mutating func observeRoundTrip(_ sample: Duration) {
        let clamped = min(max(sample, .milliseconds(10)), .seconds(2))
        roundTripTime = (roundTripTime * 7 + clamped) / 8
    }

    private mutating func combine(now: Instant) {
        var freshREMB: Double?
        if let remb, now - remb.at <= configuration.rembTimeout { freshREMB = remb.bitrate }
        var base = delayBased
        if feedbackIsFresh(now) {
            if let freshREMB { base = min(base, freshREMB) }
        } else if let freshREMB {
            base = freshREMB
        }
        let minimum = Double(max(configuration.minimum.bitsPerSecond, 1))
        let maximum = max(Double(configuration.maximum.bitsPerSecond), minimum)
        loss.settle(base: base, minimum: minimum)
        let combined = min(max(min(base, loss.rate ?? base), minimum), maximum)
        estimate = Bitrate(bitsPerSecond: Self.bits(combined))
    }

    /// A rate in bits per second as an integer, saturating.
    static func bits(_ value: Double) -> Int64 {
        guard value.isFinite else { return value > 0 ? .max : 0 }
        return Int64(exactly: value.rounded()) ?? (value > 0 ? .max : .min)
    }
}
