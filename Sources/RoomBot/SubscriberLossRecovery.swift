import LossRecovery
import Wire

/// A subscribing bot's NACKs, the way a browser sends them: one
/// `LossRecovery.NACKGenerator` per received video SSRC (RFC 4585 section
/// 6.2.1), which waits a short reorder delay before the first NACK,
/// retries each round-trip time, stops after its retry limit or age, and
/// turns loss too large to repair into a keyframe request. Retransmitted
/// packets (unwrapped from RTX, RFC 4588) fill their gap without moving
/// the highest sequence number.
///
/// The subscriber has no round-trip estimate of its own (the server sends
/// it no reports about our SSRCs), so retries use the generator's default
/// until one is given.
struct SubscriberLossRecovery {
    private var generators: [SSRC: NACKGenerator] = [:]
    /// Reused by `poll` so a quiet poll allocates nothing.
    private var numbers: [UInt16] = []

    mutating func received(ssrc: SSRC, sequenceNumber: UInt16, arrival: Instant, isRetransmission: Bool) {
        if generators[ssrc] == nil {
            numbers.reserveCapacity(64)
            generators[ssrc] = NACKGenerator()
        }
        generators[ssrc]?.received(sequenceNumber: sequenceNumber, arrival: arrival, isRetransmission: isRetransmission)
    }

    /// Calls `send` for each SSRC with numbers to NACK now or a keyframe
    /// to ask for.
    mutating func poll(now: Instant, roundTripTime: Duration?, _ send: (SSRC, [UInt16], _ keyframeNeeded: Bool) -> Void) {
        // By index, so mutating a generator never copies the dictionary
        // (iterating `keys` would keep a second reference to its storage).
        var index = generators.startIndex
        while index != generators.endIndex {
            if let due = generators.values[index].nextDeadline, due <= now {
                numbers.removeAll(keepingCapacity: true)
                let keyframe = generators.values[index].poll(now: now, roundTripTime: roundTripTime, into: &numbers)
                if !numbers.isEmpty || keyframe { send(generators.keys[index], numbers, keyframe) }
            }
            index = generators.index(after: index)
        }
    }

    /// The earliest time `poll` has something to do.
    var nextDeadline: Instant? {
        var earliest: Instant?
        for generator in generators.values {
            if let due = generator.nextDeadline, earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }
}
