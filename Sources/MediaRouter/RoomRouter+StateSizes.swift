import BandwidthEstimation
import LossRecovery

/// The sizes of the engine's tables: what a peer could make grow. Tests of
/// hostile input (Tests/MediaWorkerTests/AdversaryTests*.swift) compare
/// them before and after an attack; every one is bounded by commands from
/// the rooms layer (signalled tracks, subscriptions), never by packets,
/// except the SSRCs learned through mid/rid, which the negotiation bounds.
package struct RoomMediaStateSizes: Equatable, Sendable {
    package var transports = 0
    package var tracks = 0
    package var subscriptions = 0
    package var outgoingStreams = 0
    package var subscriberLinks = 0
    /// Signalled and learned SSRCs over every publisher transport.
    package var routedSSRCs = 0
    /// Sequence numbers the NACK generators track, over every layer.
    package var missingSequenceNumbers = 0
    /// Rooms with an active-speaker window.
    package var speakerRooms = 0
    /// Far side: tracks relayed from other workers; source side: relays
    /// of this worker's tracks to far workers.
    package var relayedTracks = 0
    package var relaySinks = 0

    package init(transports: Int = 0, subscriberLinks: Int = 0) {
        self.transports = transports
        self.subscriberLinks = subscriberLinks
    }
}

extension RoomRouter {
    package var stateSizes: RoomMediaStateSizes {
        var s = RoomMediaStateSizes()
        s.transports = transports.transportCount
        s.tracks = tracks.count
        s.subscriptions = subscriptions.count
        s.outgoingStreams = outgoing.count
        s.subscriberLinks = links.count
        s.routedSSRCs = routesByTransport.values.reduce(0) { $0 + $1.bySSRC.count }
        s.missingSequenceNumbers = tracks.values.reduce(0) { sum, t in
            sum + t.layers.reduce(0) { $0 + ($1.stream?.missingCount ?? 0) }
        }
        s.speakerRooms = speakerSelectors.count
        s.relayedTracks = relayedTracks.count
        s.relaySinks = relaySinkTracks.count
        return s
    }
}

extension RoomRouter {
    /// Bytes the subscriber links hold, over every subscriber transport:
    /// each link's inline state (send-side estimator, probe controller,
    /// the retransmission and feedback limiters) plus its transport-cc send
    /// history ring, which grows with the rate sent (issue #14). Not in
    /// `stateSizes`, whose counts tests compare exactly.
    package var subscriberLinkBytes: Int {
        let inline =
            MemoryLayout<SentPacketHistory>.size + MemoryLayout<SendSideBandwidthEstimator>.size
            + MemoryLayout<ProbeController>.size + MemoryLayout<RetransmissionRateLimiter>.size
            + MemoryLayout<TokenBucketPair>.size
            + MemoryLayout<BandwidthAllocator>.size
        return links.values.reduce(0) { $0 + inline + $1.history.allocatedByteCount }
    }

    /// Bytes of the subscriptions' forwarded-packet histories (NACK
    /// answers): only subscriptions with RTX keep one.
    package var forwardedHistoryBytes: Int {
        subscriptions.values.reduce(0) { $0 + ($1.history?.allocatedByteCount ?? 0) }
    }
}
