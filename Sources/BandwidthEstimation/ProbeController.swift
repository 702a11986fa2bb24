import RTCP
import Wire

/// Padding the worker should send now, in packets it builds and records in
/// `SentPacketHistory` with kind `.probe`.
package struct ProbeSend: Equatable, Sendable {
    package var bytes: Int
    package init(bytes: Int) { self.bytes = bytes }
}

/// What a probe cluster showed, once its feedback is in.
package enum ProbeOutcome: Equatable, Sendable {
    /// The path carried at least the target: feed this to
    /// `SendSideBandwidthEstimator.probeSucceeded(_:now:)`.
    case succeeded(Bitrate)
    /// It did not (the measured rate, nil when too little came back); the
    /// controller waits before probing again, twice as long each time.
    case failed(measured: Bitrate?)
}

package struct ProbeControllerConfiguration: Sendable, Equatable {
    /// How long a cluster sends.
    package var clusterDuration: Duration
    /// Padding is released in slices this far apart.
    package var sendInterval: Duration
    /// The cluster's total rate (media plus padding) over the target, so
    /// that measurement noise and media below the estimate still reach it.
    package var overshoot: Double
    /// Wait after the first failure; doubles per failure up to the maximum.
    package var initialBackoff: Duration
    package var maximumBackoff: Duration
    /// A cluster whose feedback has not come back this long after it ended
    /// fails.
    package var resultTimeout: Duration

    package init(
        clusterDuration: Duration = .milliseconds(100), sendInterval: Duration = .milliseconds(10),
        overshoot: Double = 1.25, initialBackoff: Duration = .seconds(2), maximumBackoff: Duration = .seconds(60),
        resultTimeout: Duration = .seconds(1)
    ) {
        self.clusterDuration = clusterDuration
        self.sendInterval = sendInterval
        self.overshoot = overshoot
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.resultTimeout = resultTimeout
    }
}

/// Probes the path before the allocator moves a subscriber up: a short
/// cluster of padding on top of media at a rate above the wanted one, then
/// the cluster's transport-wide feedback says whether the path carried it
/// (as libwebrtc's probe controller and LiveKit's stream allocator do).
///
/// The loop, all driven by the worker:
/// 1. the allocator reports `probe` (bitrate missing for the next step):
///    `request(target: estimate + probe, estimate:, usage:, now:)`;
/// 2. `poll(now:)` until it returns nil, sending the padding it asks for
///    marked `.probe`; wake again at `nextDeadline`;
/// 3. on each feedback, after the estimator: `transportFeedback(...)`; a
///    `.succeeded(rate)` goes to the estimator's `probeSucceeded`.
///
/// The measurement covers every packet sent during the cluster (media and
/// padding): sent rate over send span, received rate over arrival span,
/// each leaving out one packet's bytes for the interval, and the result is
/// the lower. One cluster at a time; none while over-using or backing off.
package struct ProbeController: Sendable {
    package enum State: Equatable, Sendable {
        case idle
        /// Sending padding for a cluster aimed at `target`.
        case probing(target: Bitrate)
        /// Sent; waiting for feedback to cover the cluster.
        case measuring(target: Bitrate)
    }

    package let configuration: ProbeControllerConfiguration
    package private(set) var state: State = .idle
    /// No probe starts before this after a failure.
    package private(set) var backoffUntil: Instant?

    private var backoff: Duration
    private var start = Instant.zero
    private var end = Instant.zero
    private var lastSlice = Instant.zero
    private var paddingBitsPerSecond = 0.0
    private var measurement = Measurement()
    private var newestProcessed: Int64?

    private struct Measurement: Sendable {
        var sentBytes = 0
        var firstSend: Int64?
        var lastSend: Int64?
        var lastSentSize = 0
        var receivedBytes = 0
        var receivedCount = 0
        var firstArrival: Int64?
        var lastArrival: Int64?
        var lastReceivedSize = 0
    }

    package init(configuration: ProbeControllerConfiguration = ProbeControllerConfiguration()) {
        self.configuration = configuration
        backoff = configuration.initialBackoff
    }

    /// Asks for a cluster that shows whether the path carries `target` in
    /// total. Ignored while a cluster runs, while backing off, while the
    /// detector sees over-use, or when the estimate already allows it.
    package mutating func request(target: Bitrate, estimate: Bitrate, usage: BandwidthUsage, now: Instant) {
        guard state == .idle, usage != .overusing, target > estimate else { return }
        if let backoffUntil, now < backoffUntil { return }
        let total = Double(target.bitsPerSecond) * configuration.overshoot
        paddingBitsPerSecond = max(total - Double(max(estimate.bitsPerSecond, 0)), 0)
        start = now
        end = now + configuration.clusterDuration
        lastSlice = now
        measurement = Measurement()
        state = .probing(target: target)
    }

    /// The padding due now, or nil when none is (then wait for
    /// `nextDeadline`). Also times out a cluster whose feedback never came.
    package mutating func poll(now: Instant) -> ProbeSend? {
        switch state {
        case .idle:
            return nil
        case .measuring(let target):
            if now >= end + configuration.resultTimeout { fail(target: target, measured: nil, now: now) }
            return nil
        case .probing(let target):
            let until = min(now, end)
            let elapsed = until - lastSlice
            if now >= end { state = .measuring(target: target) }
            guard elapsed >= configuration.sendInterval || (now >= end && elapsed > .zero) else { return nil }
            lastSlice = until
            let bytes = paddingBitsPerSecond * AIMDRateControl.seconds(elapsed) / 8
            let whole = Int(exactly: bytes.rounded()) ?? 0
            return whole > 0 ? ProbeSend(bytes: whole) : nil
        }
    }

    /// When `poll` next has something to do.
    package var nextDeadline: Instant? {
        switch state {
        case .idle: nil
        case .probing: min(lastSlice + configuration.sendInterval, end)
        case .measuring: end + configuration.resultTimeout
        }
    }

    /// Measures the cluster from feedback; returns the outcome once the
    /// feedback covers a packet sent after the cluster ended.
    package mutating func transportFeedback(
        _ feedback: TransportCCFeedback, packet: RawSpan, history: SentPacketHistory, now: Instant
    )
        -> ProbeOutcome?
    {
        let target: Bitrate
        switch state {
        case .idle: return nil
        case .probing(let t), .measuring(let t): target = t
        }
        var coveredEnd = false
        // Only what the history holds and was not seen yet is walked, as in
        // `SendSideBandwidthEstimator.transportFeedback`.
        let positions = history.positions(
            base: feedback.baseSequenceNumber, count: feedback.statusCount, after: newestProcessed)
        var walker = feedback.statuses(in: packet, positions: positions)
        while let result = walker.next() {
            guard let sent = history.packet(result.sequenceNumber) else { continue }
            if let newestProcessed, sent.sequenceNumber <= newestProcessed { continue }
            newestProcessed = sent.sequenceNumber
            if sent.sentAt >= end {
                coveredEnd = true
                continue
            }
            guard sent.sentAt >= start else { continue }
            record(sent, arrival: result.arrival?.nanoseconds)
        }
        if case .measuring = state, coveredEnd {
            return evaluate(target: target, now: now)
        }
        if case .measuring = state, now >= end + configuration.resultTimeout {
            fail(target: target, measured: nil, now: now)
            return .failed(measured: nil)
        }
        return nil
    }

    /// A built feedback value (simulations, tests), serialized and parsed
    /// first, then walked as feedback from the wire is.
    package mutating func transportFeedback(
        _ feedback: TransportLayerCC, history: SentPacketHistory, now: Instant
    )
        -> ProbeOutcome?
    {
        let bytes = feedback.serialized()
        guard let parsed = TransportCCFeedback.parsedPacket(bytes.span.bytes) else { return nil }
        return transportFeedback(parsed, packet: bytes.span.bytes, history: history, now: now)
    }

    private mutating func record(_ packet: SentPacket, arrival: Int64?) {
        let send = packet.sentAt.nanoseconds
        measurement.sentBytes &+= packet.size
        if measurement.firstSend == nil { measurement.firstSend = send }
        if send >= (measurement.lastSend ?? .min) {
            measurement.lastSend = send
            measurement.lastSentSize = packet.size
        }
        guard let arrival else { return }
        measurement.receivedBytes &+= packet.size
        measurement.receivedCount += 1
        if arrival < (measurement.firstArrival ?? .max) { measurement.firstArrival = arrival }
        if arrival >= (measurement.lastArrival ?? .min) {
            measurement.lastArrival = arrival
            measurement.lastReceivedSize = packet.size
        }
    }

    private mutating func evaluate(target: Bitrate, now: Instant) -> ProbeOutcome {
        let m = measurement
        guard m.receivedCount >= 5, let firstSend = m.firstSend, let lastSend = m.lastSend,
            let firstArrival = m.firstArrival, let lastArrival = m.lastArrival,
            lastSend > firstSend, lastArrival > firstArrival
        else {
            fail(target: target, measured: nil, now: now)
            return .failed(measured: nil)
        }
        let sendRate = Double(m.sentBytes &- m.lastSentSize) * 8 / (Double(lastSend &- firstSend) / 1e9)
        let receiveRate = Double(m.receivedBytes &- m.lastReceivedSize) * 8 / (Double(lastArrival &- firstArrival) / 1e9)
        let measured = Bitrate(bitsPerSecond: SendSideBandwidthEstimator.bits(min(sendRate, receiveRate)))
        guard measured >= target else {
            fail(target: target, measured: measured, now: now)
            return .failed(measured: measured)
        }
        backoff = configuration.initialBackoff
        backoffUntil = nil
        state = .idle
        return .succeeded(measured)
    }

    private mutating func fail(target: Bitrate, measured: Bitrate?, now: Instant) {
        backoffUntil = now + backoff
        backoff = min(backoff * 2, configuration.maximumBackoff)
        state = .idle
    }
}
