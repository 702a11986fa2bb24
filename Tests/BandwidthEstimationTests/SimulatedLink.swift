import BandwidthEstimation
import RTCP
import SFUTesting
import Wire

/// A bottleneck link: a drop-tail FIFO queue drained at `capacity`, then
/// `propagation` of one-way delay, with seeded random loss on top.
struct SimulatedLink {
    var capacity: Bitrate
    var propagation: Duration = .milliseconds(100)
    var randomLoss = 0.0
    /// Packets that would wait longer than this in the queue are dropped.
    var maximumQueueDelay: Duration = .milliseconds(500)
    var rng = SeededRandom(seed: 42)
    private var busyUntil = Instant.zero

    init(capacity: Bitrate, randomLoss: Double = 0) {
        self.capacity = capacity
        self.randomLoss = randomLoss
    }

    /// When the packet reaches the receiver, nil if lost.
    mutating func send(size: Int, at now: Instant) -> Instant? {
        if randomLoss > 0, rng.unit() < randomLoss { return nil }
        let start = max(now, busyUntil)
        guard start - now <= maximumQueueDelay else { return nil }
        let serialization = Duration.nanoseconds(Int64(size) * 8 * 1_000_000_000 / max(capacity.bitsPerSecond, 1))
        busyUntil = start + serialization
        return busyUntil + propagation
    }
}

/// A sender that sends media at its own estimate (plus any probe padding)
/// through a `SimulatedLink` to a receiver that returns transport-wide
/// feedback every `feedbackInterval`, over a return path of the link's
/// propagation delay. Time moves in 1 ms ticks.
struct CongestionSession {
    var estimator: SendSideBandwidthEstimator
    var history = SentPacketHistory()
    var link: SimulatedLink
    var prober: ProbeController?
    var now = Instant(nanoseconds: 1_000_000_000)
    var feedbackInterval: Duration = .milliseconds(100)
    var packetSize = 1200
    /// Outcomes of probe clusters, in order.
    var probeOutcomes: [ProbeOutcome] = []
    /// (time, estimate) after each tick.
    var trace: [(at: Instant, estimate: Bitrate)] = []

    private var credit = 0.0
    private var sentLog: [(sequenceNumber: UInt16, arrival: Instant?)] = []
    private var reported = 0
    private var nextFeedback: Instant
    private var inFlight: [(deliverAt: Instant, feedback: TransportLayerCC)] = []
    private var feedbackCount: UInt8 = 0

    init(estimator: SendSideBandwidthEstimator = SendSideBandwidthEstimator(), link: SimulatedLink) {
        self.estimator = estimator
        self.link = link
        nextFeedback = now + .milliseconds(100)
    }

    mutating func run(for duration: Duration) {
        let end = now + duration
        while now < end {
            now += .milliseconds(1)
            credit += Double(estimator.estimate.bitsPerSecond) / 1000
            while credit >= Double(packetSize * 8) {
                credit -= Double(packetSize * 8)
                send(size: packetSize, kind: .media)
            }
            if var prober {
                while let padding = prober.poll(now: now) {
                    var left = padding.bytes
                    while left > 0 {
                        let size = min(left, packetSize)
                        send(size: size, kind: .probe)
                        left -= size
                    }
                }
                self.prober = prober
            }
            if now >= nextFeedback {
                buildFeedback()
                nextFeedback = now + feedbackInterval
            }
            while let first = inFlight.first, first.deliverAt <= now {
                inFlight.removeFirst()
                estimator.transportFeedback(first.feedback, history: history, now: now)
                if var prober {
                    if let outcome = prober.transportFeedback(first.feedback, history: history, now: now) {
                        probeOutcomes.append(outcome)
                        if case .succeeded(let rate) = outcome { estimator.probeSucceeded(rate, now: now) }
                    }
                    self.prober = prober
                }
            }
            trace.append((now, estimator.estimate))
        }
    }

    /// Mean estimate over the last `window` of the trace, in bit/s.
    func meanEstimate(last window: Duration) -> Double {
        let from = now - window
        let samples = trace.filter { $0.at > from }
        return samples.reduce(0.0) { $0 + Double($1.estimate.bitsPerSecond) } / Double(max(samples.count, 1))
    }

    private mutating func send(size: Int, kind: SentPacketKind) {
        let sequenceNumber = history.nextSequenceNumber()
        history.sent(transportSequenceNumber: sequenceNumber, size: size, at: now, kind: kind)
        sentLog.append((sequenceNumber, link.send(size: size, at: now)))
    }

    /// Reports every packet up to the newest that has arrived; lost ones
    /// before it as not received.
    private mutating func buildFeedback() {
        guard let last = sentLog.lastIndex(where: { $0.arrival.map { $0 <= now } ?? false }), last >= reported else {
            return
        }
        var arrivals = sentLog[reported...last].compactMap { entry -> TransportCCArrival? in
            let arrived = entry.arrival.flatMap { $0 <= now ? $0 : nil }
            return TransportCCArrival(sequenceNumber: entry.sequenceNumber, arrival: arrived)
        }
        reported = last + 1
        while !arrivals.isEmpty {
            let built = TransportLayerCC.build(
                senderSSRC: SSRC(rawValue: 1), mediaSSRC: SSRC(rawValue: 2), feedbackPacketCount: feedbackCount,
                arrivals: arrivals)
            feedbackCount &+= 1
            inFlight.append((now + link.propagation, built.feedback))
            arrivals.removeFirst(max(built.consumed, 1))
        }
    }
}
