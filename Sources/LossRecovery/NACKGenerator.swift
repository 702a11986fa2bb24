import Wire

/// What one `NACKGenerator.poll` asks the shell to do: send a Generic NACK
/// (RFC 4585 section 6.2.1) for `sequenceNumbers` (the RTCP target's
/// `TransportLayerNACK(senderSSRC:mediaSSRC:lostSequenceNumbers:)` packs
/// them), and/or ask the publisher for a keyframe (PLI) because the loss
/// was too large to repair.
package struct NACKRequest: Equatable, Sendable {
    package var sequenceNumbers: [UInt16]
    package var keyframeNeeded: Bool

    package init(sequenceNumbers: [UInt16] = [], keyframeNeeded: Bool = false) {
        self.sequenceNumbers = sequenceNumbers
        self.keyframeNeeded = keyframeNeeded
    }

    /// Nothing to send.
    package var isEmpty: Bool { sequenceNumbers.isEmpty && !keyframeNeeded }
}

/// Finds the packets lost on the way from a publisher, for one incoming
/// SSRC, and schedules Generic NACKs for them (RFC 4585 section 6.2.1),
/// in the manner of libwebrtc's NackRequester.
///
/// - `received` notes gaps between the highest sequence number seen and a
///   newer one; a late or retransmitted packet fills its gap. Retransmitted
///   packets never create gaps or move the highest number.
/// - A missing number is first NACKed `reorderDelay` after its gap was
///   seen (a reordered packet usually arrives by then), then again each
///   round-trip time (at least `minimumRetryInterval`; 100 ms while the RTT
///   is unknown), at most `maxRetries` times, and forgotten `maxAge` after
///   its gap was seen.
/// - At most `maxMissing` numbers are tracked. A gap that would exceed it,
///   a forward jump larger than it, or a packet more than `resetDistance`
///   behind the highest (the sender restarted its numbering) clears the
///   list and sets `keyframeNeeded`: that much loss is repaired by a
///   keyframe, not by retransmission.
///
/// `received` allocates nothing (the list's storage is reserved at init);
/// `poll` returns a small array, or appends to the caller's buffer.
package struct NACKGenerator: Sendable {
    package struct Configuration: Equatable, Sendable {
        package var reorderDelay: Duration = .milliseconds(10)
        package var defaultRoundTripTime: Duration = .milliseconds(100)
        package var minimumRetryInterval: Duration = .milliseconds(5)
        package var maxRetries = 10
        package var maxAge: Duration = .seconds(1)
        package var maxMissing = 1000
        package var resetDistance: UInt64 = 10_000
        package init() {}
    }

    private struct Missing: Sendable {
        var sequenceNumber: UInt64
        var detected: Instant
        var lastSent: Instant?
        var retries: Int
    }

    package let configuration: Configuration
    private var unwrapper = SequenceNumberUnwrapper()
    private var highest: UInt64?
    private var missing: [Missing]
    private var pendingKeyframe = false
    private var retryInterval: Duration

    /// When `poll` next has something to do; nil when nothing is pending.
    /// It may be early (a gap filled since), never late.
    package private(set) var nextDeadline: Instant?
    /// Sequence numbers put in NACK requests so far (retries included).
    package private(set) var requestedCount = 0
    /// Times the generator gave up and asked for a keyframe.
    package private(set) var keyframeRequestCount = 0

    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        missing = []
        missing.reserveCapacity(max(configuration.maxMissing, 0))
        retryInterval = configuration.defaultRoundTripTime
    }

    /// Numbers currently considered lost and not yet given up on.
    package var missingCount: Int { missing.count }

    /// Notes the arrival of one packet of this SSRC. Set
    /// `isRetransmission` for packets unwrapped from RTX (RFC 4588).
    package mutating func received(sequenceNumber: UInt16, arrival: Instant, isRetransmission: Bool) {
        let extended = unwrapper.unwrap(sequenceNumber)
        guard let highest else {
            if !isRetransmission { self.highest = extended }
            return
        }
        if extended < highest {
            if highest - extended > configuration.resetDistance, !isRetransmission {
                restart(at: sequenceNumber, arrival: arrival)
            } else {
                remove(extended)
            }
            return
        }
        guard extended > highest, !isRetransmission else { return }
        let gap = extended - highest - 1
        self.highest = extended
        guard gap > 0 else { return }
        let limit = UInt64(max(configuration.maxMissing, 0))
        guard gap <= limit else {
            giveUp(arrival: arrival)
            return
        }
        if UInt64(missing.count) + gap > limit { giveUp(arrival: arrival) }
        var n = highest + 1
        while n < extended {
            missing.append(Missing(sequenceNumber: n, detected: arrival, lastSent: nil, retries: 0))
            n += 1
        }
        schedule(arrival + configuration.reorderDelay)
    }

    /// The numbers to NACK now, and whether a keyframe is needed.
    package mutating func poll(now: Instant, roundTripTime: Duration?) -> NACKRequest {
        var numbers: [UInt16] = []
        let keyframe = poll(now: now, roundTripTime: roundTripTime, into: &numbers)
        return NACKRequest(sequenceNumbers: numbers, keyframeNeeded: keyframe)
    }

    /// Appends the numbers to NACK now to `sequenceNumbers` (reuse one
    /// buffer to avoid allocating) and returns whether a keyframe is needed.
    /// Updates `nextDeadline`.
    package mutating func poll(now: Instant, roundTripTime: Duration?, into sequenceNumbers: inout [UInt16]) -> Bool {
        retryInterval = max(roundTripTime ?? configuration.defaultRoundTripTime, configuration.minimumRetryInterval)
        var deadline: Instant?
        var kept = 0
        for i in missing.indices {
            var entry = missing[i]
            let expiry = entry.detected + configuration.maxAge
            if now > expiry { continue }
            var due = entry.lastSent.map { $0 + retryInterval } ?? entry.detected + configuration.reorderDelay
            if now >= due {
                sequenceNumbers.append(UInt16(truncatingIfNeeded: entry.sequenceNumber))
                requestedCount &+= 1
                entry.retries += 1
                entry.lastSent = now
                if entry.retries >= configuration.maxRetries { continue }
                due = now + retryInterval
            }
            // An entry whose next retry falls after its expiry is kept (a late
            // arrival still fills it) but never needs a wake-up.
            if due <= expiry, deadline.map({ due < $0 }) ?? true { deadline = due }
            missing[kept] = entry
            kept += 1
        }
        missing.removeLast(missing.count - kept)
        nextDeadline = deadline
        let keyframe = pendingKeyframe
        pendingKeyframe = false
        return keyframe
    }

    private mutating func schedule(_ instant: Instant) {
        if nextDeadline.map({ instant < $0 }) ?? true { nextDeadline = instant }
    }

    private mutating func giveUp(arrival: Instant) {
        missing.removeAll(keepingCapacity: true)
        pendingKeyframe = true
        keyframeRequestCount &+= 1
        schedule(arrival)
    }

    /// The sender's numbering moved far backwards: start over from here.
    private mutating func restart(at sequenceNumber: UInt16, arrival: Instant) {
        unwrapper = SequenceNumberUnwrapper()
        highest = unwrapper.unwrap(sequenceNumber)
        giveUp(arrival: arrival)
    }

    /// Removes `sequenceNumber` from the (ascending) list, if present.
    private mutating func remove(_ sequenceNumber: UInt64) {
        var low = 0
        var high = missing.count
        while low < high {
            let mid = (low + high) / 2
            if missing[mid].sequenceNumber < sequenceNumber { low = mid + 1 } else { high = mid }
        }
        if low < missing.count, missing[low].sequenceNumber == sequenceNumber { missing.remove(at: low) }
    }
}
