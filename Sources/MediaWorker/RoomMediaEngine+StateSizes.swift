import LossRecovery

/// The sizes of the engine's tables: what a peer could make grow. Tests of
/// hostile input (Tests/MediaWorkerTests/AdversaryTests*.swift) compare
/// them before and after an attack; every one is bounded by commands from
/// the rooms layer (signalled tracks, subscriptions), never by packets,
/// except the SSRCs learned through mid/rid, which the negotiation bounds.
public struct RoomMediaStateSizes: Equatable, Sendable {
    public var transports = 0
    public var tracks = 0
    public var subscriptions = 0
    public var outgoingStreams = 0
    public var subscriberLinks = 0
    /// Signalled and learned SSRCs over every publisher transport.
    public var routedSSRCs = 0
    /// Sequence numbers the NACK generators track, over every layer.
    public var missingSequenceNumbers = 0
    /// Rooms with an active-speaker window.
    public var speakerRooms = 0
}

extension RoomMediaEngine {
    public var stateSizes: RoomMediaStateSizes {
        var s = RoomMediaStateSizes()
        s.transports = transports.transportCount
        s.tracks = tracks.count
        s.subscriptions = subscriptions.count
        s.outgoingStreams = outgoing.count
        s.subscriberLinks = links.count
        s.routedSSRCs = routesByTransport.values.reduce(0) { $0 + $1.bySSRC.count }
        s.missingSequenceNumbers = tracks.values.reduce(0) { sum, t in sum + t.layers.reduce(0) { $0 + $1.nack.missingCount } }
        s.speakerRooms = speakerSelectors.count
        return s
    }
}
