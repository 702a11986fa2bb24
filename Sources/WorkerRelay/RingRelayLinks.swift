import Synchronization

/// What one relay link has carried: written by the producer thread only
/// (a relaxed load and store, no read-modify-write), read by any thread
/// for `/metrics`.
package final class RelayLinkCounters: Sendable {
    /// Messages pushed into the ring.
    package let sent = Atomic<UInt64>(0)
    /// Messages dropped because the ring was full (the far worker is
    /// behind): never waited for.
    package let droppedFull = Atomic<UInt64>(0)
    /// Messages refused before the ring: a packet longer than a slot, an
    /// empty packet, a layer out of range.
    package let refused = Atomic<UInt64>(0)

    package init() {}

    /// The three counts as of now (any thread).
    package var values: RelayLinkCounts {
        RelayLinkCounts(
            sent: sent.load(ordering: .relaxed), droppedFull: droppedFull.load(ordering: .relaxed),
            refused: refused.load(ordering: .relaxed))
    }

    @inline(__always)
    func bump(_ counter: borrowing Atomic<UInt64>) {
        counter.store(counter.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }
}

/// `RelayLinkCounters` read at one moment.
package struct RelayLinkCounts: Equatable, Sendable {
    package var sent: UInt64 = 0
    package var droppedFull: UInt64 = 0
    package var refused: UInt64 = 0
    package init(sent: UInt64 = 0, droppedFull: UInt64 = 0, refused: UInt64 = 0) {
        self.sent = sent
        self.droppedFull = droppedFull
        self.refused = refused
    }
}

/// The producer side of one ring between two workers, shared by both link
/// kinds: it pushes encoded messages and remembers whether the consumer
/// must be woken. The shell wakes the consumer once per loop turn when
/// `takeWake()` says so, never once per packet.
package class RingRelayProducer: @unchecked Sendable {
    package let ring: PacketRing
    package let counters = RelayLinkCounters()
    /// Producer thread only: a message was pushed since the last
    /// `takeWake`.
    @exclusivity(unchecked) private var pushedSinceWake = false

    package init(ring: PacketRing) { self.ring = ring }

    /// Producer thread only: whether anything was pushed since the last
    /// call; clears it.
    package func takeWake() -> Bool {
        defer { pushedSinceWake = false }
        return pushedSinceWake
    }

    @inline(__always)
    final func push(_ encode: (UnsafeMutableRawBufferPointer) -> Int?) -> Bool {
        var refused = false
        let pushed = ring.push { slot in
            let n = encode(slot)
            refused = n == nil
            return n
        }
        if pushed {
            counters.bump(counters.sent)
            pushedSinceWake = true
        } else if refused {
            counters.bump(counters.refused)
        } else {
            counters.bump(counters.droppedFull)
        }
        return pushed
    }
}

/// `RelaySourceLink` over a ring to one far worker: media and sender
/// reports of the tracks whose source is the producer's worker. The ring's
/// SPSC contract applies: only the source worker's thread sends.
package final class RingRelaySourceLink: RingRelayProducer, RelaySourceLink, @unchecked Sendable {
    package func sendMedia(_ track: RelayTrackID, layer: Int, isRetransmission: Bool, packet: UnsafeRawBufferPointer) -> Bool {
        push { RelayMessage.encodeMedia(track, layer: layer, isRetransmission: isRetransmission, packet: packet, into: $0) }
    }

    package func sendSenderReport(_ track: RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32) -> Bool {
        push { RelayMessage.encodeSenderReport(track, layer: layer, ntp: ntp, rtpTimestamp: rtpTimestamp, into: $0) }
    }

    package func sendLayerBitrates(_ track: RelayTrackID, _ rates: RelayedLayerBitrates) -> Bool {
        push { RelayMessage.encodeLayerBitrates(track, rates, into: $0) }
    }
}

/// `RelayFeedbackLink` over a ring to one source worker; only the far
/// worker's thread sends.
package final class RingRelayFeedbackLink: RingRelayProducer, RelayFeedbackLink, @unchecked Sendable {
    package func sendFeedback(_ feedback: RelayFeedback) -> Bool {
        push { RelayMessage.encodeFeedback(feedback, into: $0) }
    }
}
