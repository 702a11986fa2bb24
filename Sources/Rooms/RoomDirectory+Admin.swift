import RoomProtocol
import Wire

/// The server API's operations (docs/API.md) and room lifetimes: what a
/// backend may do to rooms without joining one. Each reuses what a
/// participant's own message does (leaving, muting), so the others hear
/// the same messages either way.
extension RoomDirectory {
    // MARK: Events

    /// Records a webhook event; past `RoomEvent.pendingLimit` undrained
    /// ones it is dropped and counted.
    mutating func record(_ event: RoomEvent) {
        guard recordsEvents else { return }
        guard events.count < RoomEvent.pendingLimit else {
            droppedEvents += 1
            return
        }
        events.append(event)
    }

    /// The events since the last call, oldest first.
    package mutating func takeEvents() -> [RoomEvent] {
        guard !events.isEmpty else { return [] }
        defer { events = [] }
        return events
    }

    // MARK: Lifetimes

    /// The last member left `name`: closed now, or kept for its empty
    /// timeout (its deadline stamped by the next `closeEmptyRooms`).
    mutating func roomEmptied(_ name: String) {
        guard let room = rooms[name] else { return }
        if room.options.emptyTimeout > .zero, !room.isCallRoom, !isDraining {
            emptiedRooms.insert(name)
        } else {
            dropRoom(name)
        }
    }

    mutating func dropRoom(_ name: String) {
        guard let room = rooms.removeValue(forKey: name) else { return }
        emptiedRooms.remove(name)
        if !room.isCallRoom { record(.roomFinished(room: name)) }
    }

    /// Stamps the deadline of rooms that emptied since the last call, and
    /// closes the empty rooms whose timeout passed. The shell calls it on
    /// its ticker (every 250 ms), so a timeout is kept to that.
    package mutating func closeEmptyRooms(now: Instant) {
        guard !emptiedRooms.isEmpty else { return }
        for name in emptiedRooms.sorted() {
            guard let room = rooms[name], room.members.isEmpty else {
                emptiedRooms.remove(name)
                continue
            }
            guard let deadline = room.emptyDeadline else {
                rooms[name]?.emptyDeadline = now + room.options.emptyTimeout
                continue
            }
            if deadline <= now { dropRoom(name) }
        }
    }

    // MARK: Queries

    package func roomSummary(_ name: String) -> RoomSummary? {
        guard let room = rooms[name], !room.isCallRoom else { return nil }
        return RoomSummary(
            name: name, options: room.options, participants: room.members.count,
            tracks: room.members.reduce(0) { $0 + (participants[$1]?.tracks.count ?? 0) })
    }

    /// Every room but call rooms, by name.
    package var roomSummaries: [RoomSummary] { rooms.keys.sorted().compactMap { roomSummary($0) } }

    /// The members of `room` (nil: no such room), in the order they came.
    package func participantSummaries(of room: String) -> [ParticipantSummary]? {
        guard let r = rooms[room], !r.isCallRoom else { return nil }
        return r.members.compactMap { id in
            guard let p = participants[id] else { return nil }
            let kind: String
            switch p.kind {
            case .webSocket: kind = "websocket"
            case .whip: kind = "whip"
            case .whep: kind = "whep"
            case .remote: kind = "remote"
            }
            return ParticipantSummary(
                info: p.info, kind: kind, connected: p.connection != nil || p.kind != .webSocket, grants: p.grants)
        }
    }

    // MARK: Changes

    /// Makes an empty room with `options`; it closes after
    /// `options.emptyTimeout` unless someone joins.
    package mutating func createRoom(_ name: String, options: RoomOptions, now: Instant) -> Result<RoomSummary, RoomError> {
        if let problem = options.problem(limits: configuration.limits) { return .failure(RoomError(.badRequest, problem)) }
        guard rooms[name] == nil else { return .failure(RoomError(.roomExists, "room '\(name)' exists")) }
        guard !isDraining else { return .failure(RoomError(.draining, "the server is shutting down")) }
        if let refusal = refuseEntry(to: name) { return .failure(refusal) }
        var room = newRoom(name, options: options)
        // Empty from the start: it waits `emptyTimeout` for its first
        // member (zero: it closes at the next tick unless someone came).
        room.emptyDeadline = now + options.emptyTimeout
        rooms[name] = room
        emptiedRooms.insert(name)
        return .success(roomSummary(name)!)
    }

    /// Ends `room`: every member is removed (told `removed`, its
    /// connection closed), then the room closes.
    package mutating func closeRoom(_ name: String) -> Result<[RoomEffect], RoomError> {
        guard let room = rooms[name], !room.isCallRoom else { return .failure(RoomError(.unknownRoom, "no room '\(name)'")) }
        var effects: [RoomEffect] = []
        for id in room.members where participants[id]?.remote == nil {
            effects += removeParticipant(id, reason: "the room was closed")
        }
        for id in members(of: name) { effects += remove(id, reason: "left") }
        dropRoom(name)
        return .success(effects)
    }

    /// The member of `room` with `identity`, or the error for the API.
    package func member(_ identity: String, of room: String) -> Result<ParticipantID, RoomError> {
        guard let r = rooms[room], !r.isCallRoom else { return .failure(RoomError(.unknownRoom, "no room '\(room)'")) }
        guard let id = r.members.first(where: { participants[$0]?.identity == identity && participants[$0]?.remote == nil })
        else { return .failure(RoomError(.unknownParticipant, "no participant '\(identity)' in room '\(room)'")) }
        return .success(id)
    }

    /// Takes `identity` out of `room` as if it left: the others hear
    /// `participant-left`; a WebSocket participant is told `removed` and
    /// its connection closes (it cannot resume: it is gone, not dropped).
    package mutating func removeParticipant(_ identity: String, of room: String) -> Result<[RoomEffect], RoomError> {
        member(identity, of: room).map { removeParticipant($0, reason: "removed by the server API") }
    }

    private mutating func removeParticipant(_ id: ParticipantID, reason: String) -> [RoomEffect] {
        let connection = participants[id]?.connection
        var effects: [RoomEffect] = []
        if let connection { effects.append(.send(connection, .error(code: .removed, message: reason))) }
        effects += remove(id, reason: reason)
        if let connection { effects.append(.close(connection)) }
        return effects
    }

    /// Mutes or unmutes `trackID` of `identity` as the publisher's own
    /// `mute` does, and tells the publisher too (its client should stop
    /// or resume sending: the server does not drop the media itself).
    package mutating func muteTrack(
        _ trackID: String, of identity: String, in room: String, muted: Bool
    ) -> Result<[RoomEffect], RoomError> {
        let id: ParticipantID
        switch member(identity, of: room) {
        case .success(let found): id = found
        case .failure(let error): return .failure(error)
        }
        guard let p = participants[id], p.tracks.contains(where: { $0.id == trackID }) else {
            return .failure(RoomError(.unknownTrack, "'\(identity)' has no track \(trackID)"))
        }
        return .success(
            mute(p, trackID: trackID, muted: muted) + send(id, .trackMuted(participantID: id, trackID: trackID, muted: muted)))
    }

    /// Sets `identity`'s metadata; everyone in the room (itself included)
    /// hears `participant-updated`.
    package mutating func updateMetadata(
        _ metadata: String, of identity: String, in room: String
    ) -> Result<(ParticipantSummary, [RoomEffect]), RoomError> {
        guard metadata.utf8.count <= RoomOptions.maxMetadataBytes else {
            return .failure(RoomError(.badRequest, "metadata is over \(RoomOptions.maxMetadataBytes) bytes"))
        }
        let id: ParticipantID
        switch member(identity, of: room) {
        case .success(let found): id = found
        case .failure(let error): return .failure(error)
        }
        participants[id]?.metadata = metadata
        guard let p = participants[id], let summary = participantSummaries(of: room)?.first(where: { $0.info.id == id })
        else { return .failure(RoomError(.unknownParticipant, "no participant '\(identity)'")) }
        return .success((summary, broadcast(to: room, .participantUpdated(p.info))))
    }

    /// Sets `room`'s metadata (the API and webhooks show it; the room
    /// protocol has no room-level message for it yet).
    package mutating func updateRoomMetadata(_ metadata: String, of room: String) -> Result<RoomSummary, RoomError> {
        guard metadata.utf8.count <= RoomOptions.maxMetadataBytes else {
            return .failure(RoomError(.badRequest, "metadata is over \(RoomOptions.maxMetadataBytes) bytes"))
        }
        guard rooms[room] != nil, let _ = roomSummary(room) else { return .failure(RoomError(.unknownRoom, "no room '\(room)'")) }
        rooms[room]?.options.metadata = metadata
        return .success(roomSummary(room)!)
    }
}
