import Wire

/// A datagram network in memory for sans-IO peers on a `VirtualClock`:
/// seeded random loss, a fixed delay plus seeded jitter, blocked
/// addresses and a test-chosen drop rule. Deterministic for a given seed
/// and sequence of sends, so simulations replay exactly.
///
///     net.send(bytes, from: a, to: b, now: clock.now)
///     while let d = net.receive(now: clock.now) { deliver d }
///     clock.advance(to: net.nextDelivery ?? ...)
package struct InMemoryNetwork {
    package struct Datagram: Hashable, Sendable {
        package var bytes: [UInt8]
        package var from: TransportAddress
        package var to: TransportAddress
        package var deliverAt: Instant
        /// Send order, which breaks ties between equal delivery times.
        package var sequence: Int
    }

    /// Probability (0...1) that a datagram is lost.
    package var lossRate: Double
    package var delay: Duration
    /// Extra delay, uniform in 0...jitter.
    package var jitter: Duration
    /// Datagrams from or to these addresses vanish (a dead link).
    package var blocked: Set<TransportAddress> = []
    /// Return true to drop a datagram (checked before random loss).
    package var dropRule: ((_ bytes: [UInt8], _ from: TransportAddress, _ to: TransportAddress) -> Bool)?
    package private(set) var sent = 0
    package private(set) var dropped = 0
    package private(set) var log: [Datagram] = []
    /// Keep every accepted datagram in `log` (for assertions on the wire).
    package var keepsLog = true

    private var inFlight: [Datagram] = []
    private var state: UInt64

    package init(
        seed: UInt64 = 1, lossRate: Double = 0, delay: Duration = .milliseconds(10),
        jitter: Duration = .zero
    ) {
        state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
        self.lossRate = lossRate
        self.delay = delay
        self.jitter = jitter
    }

    package mutating func send(_ bytes: [UInt8], from: TransportAddress, to: TransportAddress, now: Instant) {
        sent += 1
        let chance = Double(nextRandom() >> 11) / Double(1 << 53)
        if blocked.contains(from) || blocked.contains(to) || dropRule?(bytes, from, to) == true || chance < lossRate {
            dropped += 1
            return
        }
        var extra = Duration.zero
        if jitter > .zero {
            let span = UInt64(max(1, jitter.nanoseconds))
            extra = .nanoseconds(Int64(nextRandom() % (span + 1)))
        }
        let datagram = Datagram(bytes: bytes, from: from, to: to, deliverAt: now + delay + extra, sequence: sent)
        if keepsLog { log.append(datagram) }
        inFlight.append(datagram)
    }

    /// The next datagram due at or before `now`, earliest first.
    package mutating func receive(now: Instant) -> Datagram? {
        guard let index = inFlight.indices.min(by: { earlier(inFlight[$0], inFlight[$1]) }),
            inFlight[index].deliverAt <= now
        else { return nil }
        return inFlight.remove(at: index)
    }

    /// When the next datagram arrives; nil when nothing is in flight.
    package var nextDelivery: Instant? { inFlight.map(\.deliverAt).min() }

    private func earlier(_ a: Datagram, _ b: Datagram) -> Bool {
        (a.deliverAt, a.sequence) < (b.deliverAt, b.sequence)
    }

    private mutating func nextRandom() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
