import RoomProtocol
import SDP
import Wire

/// Every room, participant and call of one server, as a sans-IO state
/// machine: the signalling shell feeds it verified joins, client messages,
/// disconnects and time, and carries out the `RoomEffect`s it returns.
/// It never touches a socket or the clock.
///
/// Rules it keeps (docs/PROTOCOL.md):
/// - one participant per identity per room; a second connection with the
///   same identity takes the participant over (the old one is closed);
/// - a participant whose connection drops is kept for `gracePeriod`;
///   joining again with the same identity within it resumes the same
///   participant id, tracks and room;
/// - messages reach only participants of the sender's room (mesh signals,
///   track and participant events, calls: a call moves both sides out of
///   their room into a private one);
/// - every message needs the grant docs/TOKENS.md lists for it
///   (`RoomDirectory+Grants.swift`), and a resume takes the new token's;
/// - a draining server refuses joins and keeps everyone else.
package struct RoomDirectory<IDs: IdentifierSource> {
    package struct Configuration: Sendable {
        package var gracePeriod: Duration = .seconds(20)
        /// Mesh rooms send every stream to every peer: each browser encodes
        /// and uploads N-1 copies. Six keeps a typical uplink workable.
        package var meshLimit = 6
        /// Where SFU media goes; nil: a signalling-only server (mesh rooms
        /// and calls' signalling work, SFU media is refused).
        package var media: MediaEndpoint?
        /// What one client may make the directory hold (docs/SECURITY.md).
        package var limits = RoomLimits()
        /// Which worker a participant's transports go on.
        package var placement = WorkerPlacement()
        /// Each media worker's load as last published (read without I/O:
        /// the shell reads its snapshot cells); nil places by the
        /// directory's own counts alone.
        package var workerLoads: (@Sendable () -> [WorkerLoad])?
        package init(media: MediaEndpoint? = nil, limits: RoomLimits = RoomLimits()) {
            self.media = media
            self.limits = limits
        }
    }

    package let configuration: Configuration
    var ids: IDs
    var rooms: [String: Room] = [:]
    var participants: [ParticipantID: Participant] = [:]
    private var nextWorker = 0
    /// Participants placed on each media worker (`mediaWorker(for:)`).
    var placedParticipants: [Int: Int] = [:]
    private var ssrcCounter: UInt32 = 0x5317_0000
    private var sessionCounter: UInt64 = 0x5317_0000_0000
    private var byConnection: [ConnectionID: ParticipantID] = [:]
    /// WHIP/WHEP sessions by the id in their Location.
    var httpSessions: [String: ParticipantID] = [:]
    /// In a cluster, this node's id: every WHIP/WHEP session id ends with
    /// `@` and it (`HTTPSessionID`), so that another node that gets the
    /// session's PATCH or DELETE sends it here.
    package var sessionNode: String?
    private var calls: [CallID: Call] = [:]
    /// What happened since the shell last drained (`takeEvents`), for
    /// webhooks; at most `RoomEvent.pendingLimit`.
    var events: [RoomEvent] = []
    /// Whether events are recorded at all: a server without webhooks
    /// turns it off and pays nothing for them.
    package var recordsEvents = true
    /// Events dropped because nobody drained (`RoomEvent.pendingLimit`).
    package internal(set) var droppedEvents = 0
    /// Empty rooms that keep an `emptyTimeout` and wait for
    /// `closeEmptyRooms` to stamp their deadline.
    var emptiedRooms: Set<String> = []
    /// Set by `startDraining`: when this server closes its sessions.
    package private(set) var drain: Drain?
    package var isDraining: Bool { drain != nil }

    /// A SIGTERM drain: sessions close at `deadline` (monotonic) and
    /// clients are told `deadlineEpochMilliseconds` (wall clock, which the
    /// shell reads: this value never does).
    package struct Drain: Equatable, Sendable {
        package var reason: String
        package var deadline: Instant
        package var deadlineEpochMilliseconds: Int64
        package init(reason: String, deadline: Instant, deadlineEpochMilliseconds: Int64) {
            self.reason = reason
            self.deadline = deadline
            self.deadlineEpochMilliseconds = deadlineEpochMilliseconds
        }

        /// `going-away` as sent at `now`: whole seconds left, rounded up.
        package func notice(now: Instant) -> ServerMessage {
            let left = max(0, (deadline - now).nanoseconds)
            return .goingAway(
                reason: reason, deadline: deadlineEpochMilliseconds, seconds: Int((left + 999_999_999) / 1_000_000_000))
        }
    }

    package init(configuration: Configuration = Configuration(), ids: IDs) {
        self.configuration = configuration
        self.ids = ids
    }

    // MARK: Queries

    package var roomCount: Int { rooms.count }
    package var participantCount: Int { participants.count }
    package func participant(on connection: ConnectionID) -> ParticipantID? { byConnection[connection] }
    package func members(of room: String) -> [ParticipantID] { rooms[room]?.members ?? [] }
    package func room(of participant: ParticipantID) -> String? { participants[participant]?.room }
    /// The token identity a participant joined with (a recording's file
    /// name and event carry it).
    package func identity(of participant: ParticipantID) -> String? { participants[participant]?.identity }
    package func mode(of room: String) -> RoomMode? { rooms[room]?.mode }

    /// The earliest grace deadline.
    package var nextDeadline: Instant? { participants.values.compactMap(\.graceDeadline).min() }

    // MARK: Input

    /// Stop accepting joins (SIGTERM drain); everyone present stays, and
    /// every participant with a connection hears `going-away` so that its
    /// client can move to another server before the deadline. A second
    /// call changes nothing.
    package mutating func startDraining(_ drain: Drain, now: Instant) -> [RoomEffect] {
        guard self.drain == nil else { return [] }
        self.drain = drain
        let notice = drain.notice(now: now)
        return participants.values.sorted { $0.id < $1.id }.compactMap { p in p.connection.map { .send($0, notice) } }
    }

    /// Every signalling connection of a participant (the shell closes them
    /// at the drain's end).
    package var connections: [ConnectionID] { byConnection.keys.sorted() }

    /// The rooms that exist now, by name.
    package var roomNames: [String] { rooms.keys.sorted() }

    /// Takes every participant out of `room` at once (a cluster found this
    /// node's copy of the room stale: the room lives on another node now).
    /// Returns the effects (media released) and the connections the shell
    /// closes so that their clients join again, where the cluster places
    /// them. Nothing is sent to the evicted participants themselves.
    package mutating func evict(room: String, reason: String) -> (effects: [RoomEffect], connections: [ConnectionID]) {
        let members = rooms[room]?.members ?? []
        let connections = members.compactMap { participants[$0]?.connection }
        let evicted = Set(connections)
        var effects: [RoomEffect] = []
        for id in members { effects += remove(id, reason: reason) }
        effects.removeAll { if case .send(let c, _) = $0 { return evicted.contains(c) } else { return false } }
        return (effects, connections)
    }

    package mutating func join(_ request: JoinRequest, connection: ConnectionID, now: Instant) -> [RoomEffect] {
        guard byConnection[connection] == nil else {
            return [.send(connection, .error(code: .alreadyJoined, message: "this connection already joined"))]
        }
        if let existing = findParticipant(identity: request.identity, room: request.room) {
            guard participants[existing]?.kind == .webSocket else {
                return [
                    .send(
                        connection,
                        .error(code: .identityInUse, message: "'\(request.identity)' is in this room through WHIP/WHEP"))
                ]
            }
            var effects = resume(existing, on: connection) + regrant(existing, to: request.grants)
            // Resuming on a connection opened before the drain: it must
            // hear the deadline too.
            if let drain { effects.append(.send(connection, drain.notice(now: now))) }
            return effects
        }
        guard !isDraining else { return [.send(connection, .error(code: .draining, message: "the server is shutting down"))] }
        if let room = rooms[request.room] {
            if let mode = request.mode, mode != room.mode {
                return [
                    .send(
                        connection, .error(code: .modeMismatch, message: "room '\(request.room)' is a \(room.mode.rawValue) room")
                    )
                ]
            }
            if room.mode == .mesh, room.members.count >= configuration.meshLimit {
                return [.send(connection, .error(code: .roomFull, message: "mesh rooms hold at most \(configuration.meshLimit)"))]
            }
            if let refusal = refuseEntry(to: request.room) {
                return [.send(connection, .error(code: refusal.code, message: refusal.message))]
            }
        } else {
            if let refusal = refuseEntry(to: request.room) {
                return [.send(connection, .error(code: refusal.code, message: refusal.message))]
            }
            rooms[request.room] = newRoom(request.room, mode: request.mode ?? .sfu)
        }
        let id = ParticipantID(ids.next(prefix: "PA_"))
        participants[id] = Participant(
            id: id, identity: request.identity, grants: request.grants, room: request.room, connection: connection)
        byConnection[connection] = id
        return enter(id, room: request.room, resumed: false)
    }

    /// `parsedSDP`: the SDP of a `publish` or `subscriber-answer`, parsed
    /// by the shell outside its lock (`RoomLimits.parse`); nil: parsed here.
    package mutating func handle(
        _ message: ClientMessage, from connection: ConnectionID, now: Instant,
        parsedSDP: Result<SessionDescription, RoomError>? = nil
    ) -> [RoomEffect] {
        if case .ping = message { return [.send(connection, .pong)] }
        guard let id = byConnection[connection], let p = participants[id] else {
            return [.send(connection, .error(code: .notJoined, message: "send join first"))]
        }
        if let refusal = grantRefusal(message, from: p) { return refusal }
        switch message {
        case .join: return [.send(connection, .error(code: .alreadyJoined, message: "this connection already joined"))]
        case .ping: return [.send(connection, .pong)]
        case .leave: return remove(id, reason: "left")
        case .call(let to): return startCall(from: p, to: to)
        case .answerCall(let call): return answerCall(call, by: p)
        case .declineCall(let call): return declineCall(call, by: p)
        case .hangup(let call): return hangup(call, by: p)
        case .meshSignal(let to, let payload): return relayMeshSignal(from: p, to: to, payload: payload)
        case .mute(let trackID, let muted): return mute(p, trackID: trackID, muted: muted)
        case .publish, .subscriberAnswer, .unpublish, .subscribe, .unsubscribe, .setPreference:
            return handleMedia(message, from: p, parsedSDP: parsedSDP)
        }
    }

    /// The connection dropped without `leave`: keep the participant for
    /// the grace period.
    package mutating func disconnected(_ connection: ConnectionID, now: Instant) -> [RoomEffect] {
        guard let id = byConnection.removeValue(forKey: connection) else { return [] }
        participants[id]?.connection = nil
        let deadline = now + configuration.gracePeriod
        participants[id]?.graceDeadline = deadline
        return []
    }

    /// The client closed its connection on purpose (a WebSocket close
    /// with 1000 or 1001, docs/PROTOCOL.md): the same as `leave`, at once,
    /// with no grace period. Nothing when the connection had not joined
    /// (or already left).
    package mutating func closedByClient(_ connection: ConnectionID, now: Instant) -> [RoomEffect] {
        guard let id = byConnection[connection] else { return [] }
        return remove(id, reason: "left")
    }

    package mutating func handleTimeout(now: Instant) -> [RoomEffect] {
        let expired = participants.values.filter { ($0.graceDeadline.map { $0 <= now }) ?? false }.map(\.id).sorted()
        return expired.flatMap { remove($0, reason: "timed out") }
    }

    // MARK: Membership

    /// Whether a new participant may enter `room` (created if absent):
    /// `RoomLimits.participantsPerRoom` and `RoomLimits.rooms`. Resumes and
    /// returns from a call are not new and are not refused.
    func refuseEntry(to room: String) -> RoomError? {
        let limits = configuration.limits
        if let existing = rooms[room] {
            // Participants other nodes serve are theirs to bound.
            let limit = min(existing.options.maxParticipants ?? limits.participantsPerRoom, limits.participantsPerRoom)
            guard existing.members.count(where: { participants[$0]?.remote == nil }) < limit else {
                return RoomError(.roomFull, "room '\(room)' holds at most \(limit) participants")
            }
            return nil
        }
        guard rooms.values.count(where: { !$0.isCallRoom }) < limits.rooms else {
            return RoomError(.serverFull, "this server holds at most \(limits.rooms) rooms")
        }
        return nil
    }

    /// The participant of `identity` that a token for `room` reaches: a
    /// member, or one that left `room` for a call (it is in the call's
    /// room, and returns to `room` when the call ends). Without the second
    /// a reconnect during a call made a second participant of the same
    /// identity in `room`.
    func findParticipant(identity: String, room: String) -> ParticipantID? {
        // A remote participant of the same identity is another node's (a
        // client that moved here while its old node's record lives on).
        if let member = rooms[room]?.members.first(where: {
            participants[$0]?.identity == identity && participants[$0]?.remote == nil
        }) {
            return member
        }
        for call in calls.values where call.room != nil {
            for id in [call.caller, call.callee] {
                if let p = participants[id], p.identity == identity, p.roomBeforeCall == room { return id }
            }
        }
        return nil
    }

    private mutating func resume(_ id: ParticipantID, on connection: ConnectionID) -> [RoomEffect] {
        guard let p = participants[id] else { return [] }
        var effects: [RoomEffect] = []
        if let old = p.connection {
            byConnection[old] = nil
            effects.append(.close(old))
        }
        participants[id]?.connection = connection
        participants[id]?.graceDeadline = nil
        byConnection[connection] = id
        effects.append(.send(connection, joinedMessage(for: id, resumed: true)))
        // An offer sent while the connection was down (or just before it
        // dropped) may never have arrived: send it again, same version.
        if let builder = p.subscriber?.builder, builder.state == .haveLocalOffer, let offer = builder.outstandingOffer {
            effects.append(.send(connection, .subscriberOffer(sdp: offer.text, version: Int(builder.sessionVersion))))
        }
        return effects
    }

    /// Adds `id` to `room` (creating it if needed): `joined` to it,
    /// `participant-joined` to the others.
    mutating func enter(
        _ id: ParticipantID, room name: String, resumed: Bool, mode: RoomMode = .sfu, isCallRoom: Bool = false
    ) -> [RoomEffect] {
        if rooms[name] == nil { rooms[name] = newRoom(name, mode: mode, isCallRoom: isCallRoom) }
        rooms[name]?.members.append(id)
        participants[id]?.room = name
        guard let p = participants[id] else { return [] }
        var effects: [RoomEffect] = []
        if let connection = p.connection {
            effects.append(.send(connection, joinedMessage(for: id, resumed: resumed)))
        } else if p.kind == .webSocket {
            return []
        }
        effects += broadcast(to: name, except: id, .participantJoined(p.info))
        effects += subscribeToExistingTracks(id)
        rooms[name]?.emptyDeadline = nil
        emptiedRooms.remove(name)
        if !resumed, p.remote == nil, rooms[name]?.isCallRoom == false {
            record(.participantJoined(room: name, participant: p.info))
        }
        return effects
    }

    /// Takes `id` out of its room: `participant-left` to the others, media
    /// released, the room dropped when empty.
    private mutating func exit(_ id: ParticipantID) -> [RoomEffect] {
        guard let p = participants[id], rooms[p.room] != nil else { return [] }
        var effects = releaseMedia(id)
        guard var room = rooms[p.room] else { return effects }
        room.members.removeAll { $0 == id }
        effects += broadcast(members: room.members, .participantLeft(id))
        if room.mode == .sfu { effects.append(.media(.releaseParticipant(room: room.name, participant: id))) }
        rooms[room.name] = room
        if room.members.isEmpty { roomEmptied(room.name) }
        participants[id]?.tracks = []
        // The last local member gone: this node serves no part of the
        // room any more, so its remote members go too (their nodes keep
        // them); nobody here hears of it.
        if p.remote == nil, !room.members.isEmpty, !hasLocalMember(room) {
            for remote in room.members { effects += remove(remote, reason: "left") }
        }
        return effects
    }

    mutating func remove(_ id: ParticipantID, reason: String) -> [RoomEffect] {
        guard let p = participants[id] else { return [] }
        var effects: [RoomEffect] = []
        if p.remote == nil, rooms[p.room]?.isCallRoom == false {
            // Its tracks end with it: reported before it leaves.
            for track in p.tracks { record(.trackUnpublished(room: p.room, participant: p.info, trackID: track.id)) }
            record(.participantLeft(room: p.room, participant: p.info, reason: reason))
        }
        if let call = p.call {
            let others = calls[call].map { [$0.caller, $0.callee].filter { $0 != id } } ?? []
            effects += endCall(call, reason: "\(p.identity) \(reason)", returning: others)
        }
        effects += exit(id)
        if let c = p.connection { byConnection[c] = nil }
        if let s = p.session { httpSessions[s] = nil }
        participants[id] = nil
        return effects
    }

    private func joinedMessage(for id: ParticipantID, resumed: Bool) -> ServerMessage {
        let p = participants[id]!
        let room = rooms[p.room]!
        let others = room.members.filter { $0 != id }.compactMap { participants[$0]?.info }
        return .joined(participantID: id, room: room.name, mode: room.mode, participants: others, resumed: resumed)
    }

    /// A new room, its first worker the least-loaded (the next in turn on
    /// a tie, so idle workers take new rooms round-robin). `worker` is an
    /// index into `MediaEndpoint.workers`: the worker executing
    /// `openTransport` ignores a command for any index but its own.
    mutating func newRoom(_ name: String, mode: RoomMode, isCallRoom: Bool = false) -> Room {
        newRoom(name, options: RoomOptions(mode: mode), isCallRoom: isCallRoom)
    }

    mutating func newRoom(_ name: String, options: RoomOptions, isCallRoom: Bool = false) -> Room {
        var room = Room(name: name, options: options, isCallRoom: isCallRoom)
        if !isCallRoom { record(.roomStarted(room: name)) }
        let workers = max(1, configuration.media?.workers.count ?? 1)
        room.worker = configuration.placement.leastLoaded(workerScores(), startingAt: nextWorker % workers)
        nextWorker = (room.worker + 1) % workers
        return room
    }

    mutating func nextSSRC() -> SSRC {
        ssrcCounter &+= 1
        return SSRC(ssrcCounter)
    }

    mutating func nextSessionID() -> UInt64 {
        sessionCounter &+= 1
        return sessionCounter
    }

    func broadcast(to room: String, except: ParticipantID? = nil, _ message: ServerMessage) -> [RoomEffect] {
        broadcast(members: (rooms[room]?.members ?? []).filter { $0 != except }, message)
    }

    private func broadcast(members: [ParticipantID], _ message: ServerMessage) -> [RoomEffect] {
        members.compactMap { participants[$0]?.connection }.map { .send($0, message) }
    }

    func send(_ id: ParticipantID, _ message: ServerMessage) -> [RoomEffect] {
        participants[id]?.connection.map { [.send($0, message)] } ?? []
    }

    // MARK: Tracks

    mutating func mute(_ p: Participant, trackID: String, muted: Bool) -> [RoomEffect] {
        guard let index = p.tracks.firstIndex(where: { $0.id == trackID }) else {
            return send(p.id, .error(code: .unknownTrack, message: "no track \(trackID) of yours"))
        }
        participants[p.id]?.tracks[index].muted = muted
        var effects = broadcast(to: p.room, except: p.id, .trackMuted(participantID: p.id, trackID: trackID, muted: muted))
        // Enforced where the media is: a local SFU publisher's track.
        if p.remote == nil, rooms[p.room]?.mode == .sfu {
            effects.append(.media(.setTrackMuted(room: p.room, participant: p.id, trackID: trackID, muted: muted)))
        }
        return effects
    }

    // MARK: Mesh

    private func relayMeshSignal(from p: Participant, to target: ParticipantID, payload: JSONValue) -> [RoomEffect] {
        guard rooms[p.room]?.mode == .mesh else {
            return send(p.id, .error(code: .wrongMode, message: "mesh signals are for mesh rooms"))
        }
        guard target != p.id, let t = participants[target], t.room == p.room, t.connection != nil else {
            return send(p.id, .error(code: .unknownParticipant, message: "\(target) is not in this room"))
        }
        if let refusal = meshSignalRefusal(from: p, to: t, payload: payload) {
            return send(p.id, .error(code: .forbidden, message: refusal))
        }
        return send(target, .meshSignal(from: p.id, payload: payload))
    }

    // MARK: Calls

    private mutating func startCall(from caller: Participant, to callee: ParticipantID) -> [RoomEffect] {
        guard caller.call == nil else { return send(caller.id, .error(code: .busy, message: "you are already in a call")) }
        guard callee != caller.id else {
            return send(caller.id, .error(code: .cannotCallSelf, message: "you cannot call yourself"))
        }
        // Calls stay within the caller's room (docs/TOKENS.md): a token
        // admits to one room, so it reaches only the participants there.
        guard let target = participants[callee], target.connection != nil, target.room == caller.room else {
            return send(caller.id, .error(code: .unknownParticipant, message: "\(callee) is not online in your room"))
        }
        guard Need.publishAndSubscribe.isMet(by: target.grants) else {
            return send(
                caller.id, .error(code: .forbidden, message: "\(callee) may not take calls (publish and subscribe grants)"))
        }
        guard target.call == nil else { return send(caller.id, .error(code: .busy, message: "\(callee) is in another call")) }
        let id = CallID(ids.next(prefix: "CA_"))
        calls[id] = Call(id: id, caller: caller.id, callee: callee)
        participants[caller.id]?.call = id
        participants[callee]?.call = id
        // The caller learns the call id at once, so it can cancel (hang up)
        // before the answer.
        return send(caller.id, .callRinging(callID: id, to: callee, identity: target.identity))
            + send(callee, .incomingCall(callID: id, from: caller.id, identity: caller.identity))
    }

    private mutating func answerCall(_ id: CallID, by p: Participant) -> [RoomEffect] {
        guard let call = calls[id], call.callee == p.id, call.room == nil else {
            return send(p.id, .error(code: .unknownCall, message: "no call \(id) is ringing for you"))
        }
        // The caller may have resumed with a lesser token while it rang.
        guard let caller = participants[call.caller], Need.publishAndSubscribe.isMet(by: caller.grants) else {
            return send(p.id, .error(code: .forbidden, message: "the caller may no longer make calls"))
        }
        let room = "call/\(id.rawValue)"
        calls[id]?.room = room
        var effects: [RoomEffect] = []
        forgetSubscribers(call.caller, call.callee)
        for (who, peer) in [(call.caller, call.callee), (call.callee, call.caller)] {
            let previous = participants[who]?.room
            participants[who]?.roomBeforeCall = previous
            effects += exit(who)
            rooms[room] = rooms[room] ?? newRoom(room, mode: .sfu, isCallRoom: true)
            rooms[room]?.members.append(who)
            participants[who]?.room = room
            let peerIdentity = participants[peer]?.identity ?? peer.rawValue
            effects += send(who, .callStarted(callID: id, room: room, peer: peer, identity: peerIdentity))
        }
        return effects
    }

    /// Both sides of a call leave their room(s) together: without their
    /// subscriber states, the first one's exit does not offer the second a
    /// renegotiation of a transport the second's own exit releases (a
    /// stale `subscriber-offer` after `call-started` or `call-ended`). The
    /// worker's `releaseParticipant` drops their forwards.
    private mutating func forgetSubscribers(_ a: ParticipantID, _ b: ParticipantID) {
        participants[a]?.subscriber = nil
        participants[b]?.subscriber = nil
    }

    private mutating func declineCall(_ id: CallID, by p: Participant) -> [RoomEffect] {
        guard let call = calls[id], call.callee == p.id, call.room == nil else {
            return send(p.id, .error(code: .unknownCall, message: "no call \(id) is ringing for you"))
        }
        calls[id] = nil
        participants[call.caller]?.call = nil
        participants[call.callee]?.call = nil
        return send(call.caller, .callDeclined(callID: id))
    }

    private mutating func hangup(_ id: CallID, by p: Participant) -> [RoomEffect] {
        guard let call = calls[id], call.caller == p.id || call.callee == p.id else {
            return send(p.id, .error(code: .unknownCall, message: "you are not in call \(id)"))
        }
        return endCall(id, reason: call.room == nil ? "cancelled" : "hangup", returning: [call.caller, call.callee])
    }

    /// Ends a call: both sides hear `call-ended`; those in `returning` who
    /// are still present go back to the room they were in before the call.
    private mutating func endCall(_ id: CallID, reason: String, returning: [ParticipantID]) -> [RoomEffect] {
        guard let call = calls.removeValue(forKey: id) else { return [] }
        var effects: [RoomEffect] = []
        for who in [call.caller, call.callee] {
            participants[who]?.call = nil
            effects += send(who, .callEnded(callID: id, reason: reason))
        }
        guard call.room != nil else { return effects }
        forgetSubscribers(call.caller, call.callee)
        for who in [call.caller, call.callee] {
            effects += exit(who)
            let previous = participants[who]?.roomBeforeCall
            participants[who]?.roomBeforeCall = nil
            if let previous, returning.contains(who), participants[who] != nil {
                effects += enter(who, room: previous, resumed: true, mode: rooms[previous]?.mode ?? .sfu)
            }
        }
        return effects
    }
}
