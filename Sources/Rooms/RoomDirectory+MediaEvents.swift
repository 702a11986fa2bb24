extension RoomDirectory {
    /// A media worker's report about room `event.room`: who to tell. Events
    /// about rooms or participants that are gone (the worker races a
    /// departure) are dropped. Participants within their grace period have
    /// no connection and miss the event; a resumed participant learns the
    /// current state from the next change.
    package mutating func handle(_ event: MediaEvent) -> [RoomEffect] {
        guard rooms[event.room] != nil else { return [] }
        switch event {
        case .activeSpeakers(let room, let speakers):
            let present = speakers.filter { participants[$0.participantId]?.room == room }
            return broadcast(to: room, .activeSpeakers(present))
        case .publisherLayers(let room, let publisher, let trackID, let layers):
            guard let p = participants[publisher], p.room == room, p.tracks.contains(where: { $0.id == trackID }) else {
                return []
            }
            return send(publisher, .publisherLayers(trackID: trackID, layers: layers))
        case .streamState(let room, let subscriber, let trackID, let state, let layer, let reason):
            guard let p = participants[subscriber], p.room == room, p.subscriber?.subscriptions[trackID] != nil else {
                return []
            }
            return send(subscriber, .streamState(trackID: trackID, state: state, layer: layer, reason: reason))
        case .dataReceived:
            // Needs the time for the rate limit: `handle(_:now:)`.
            return []
        }
    }
}
