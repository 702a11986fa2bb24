import ICE
import Negotiation
import RoomProtocol
import SDP
import Wire

/// WHIP (RFC 9725) and WHEP sessions: participants without a signalling
/// connection. Their offer is answered synchronously (the HTTP response),
/// nothing is ever sent to them afterwards, and they leave by DELETE on
/// their Location or when their transport fails. The others see them as
/// ordinary participants (`participant-joined`, `track-published`).
///
/// One participant per identity per room holds across kinds: a WHIP or
/// WHEP offer whose identity is already present (by WebSocket or another
/// HTTP session) is refused with `identityInUse` (HTTP 409), and so is a
/// WebSocket `join` whose identity is held by an HTTP session. An HTTP
/// session is never taken over: there is no connection to close or
/// resume.
extension RoomDirectory {
    /// A WHIP offer from `request.identity` (verified token: publish grant
    /// and room checked by the shell).
    package mutating func whipPublish(_ request: JoinRequest, sdp: String, now: Instant) -> Result<HTTPSessionAnswer, RoomError> {
        whipPublish(request, parsed: configuration.limits.parse(sdp, offer: true), now: now)
    }

    /// `whipPublish` with the offer already parsed (`RoomLimits.parse`,
    /// outside the shell's lock). Every refusal comes before any state
    /// changes.
    package mutating func whipPublish(
        _ request: JoinRequest, parsed: Result<SessionDescription, RoomError>, now: Instant
    ) -> Result<HTTPSessionAnswer, RoomError> {
        if let refusal = refuseHTTPSession(request) { return .failure(refusal) }
        let offer: PublishOffer
        switch checkPublishOffer(grants: request.grants, parsed: parsed, acceptsDataChannels: false) {
        case .failure(let error): return .failure(error)
        case .success(let o): offer = o
        }
        let (id, session, joined) = addHTTPParticipant(request, kind: .whip)
        guard let p = participants[id], let applied = applyPublish(p, offer: offer),
            let ufrag = participants[id]?.publisher?.credentials.ufrag
        else { return .failure(RoomError(.negotiationFailed, "this server has no media workers")) }
        return .success(
            HTTPSessionAnswer(
                participant: id, session: session, answer: applied.answer, etag: "\"\(ufrag)\"",
                effects: joined + applied.transport + applied.tracks))
    }

    /// A WHEP offer: play the tracks of `target` (an identity), or of the
    /// room's first member that has published, when nil. Refused with
    /// `nothingPublished` when there is no such publisher yet (the shell
    /// answers 409 with Retry-After); with `negotiationFailed` when the
    /// SDP is unusable or none of the publisher's tracks fits the offer.
    package mutating func whepPlay(
        _ request: JoinRequest, target: String?, sdp: String, now: Instant
    ) -> Result<HTTPSessionAnswer, RoomError> {
        whepPlay(request, target: target, parsed: configuration.limits.parse(sdp, offer: true), now: now)
    }

    /// `whepPlay` with the offer already parsed (`RoomLimits.parse`).
    package mutating func whepPlay(
        _ request: JoinRequest, target: String?, parsed: Result<SessionDescription, RoomError>, now: Instant
    ) -> Result<HTTPSessionAnswer, RoomError> {
        if let refusal = refuseHTTPSession(request) { return .failure(refusal) }
        guard request.grants.subscribe else { return .failure(RoomError(.forbidden, "your token has no subscribe grant")) }
        guard let media = configuration.media else {
            return .failure(RoomError(.negotiationFailed, "this server has no media workers"))
        }
        let offer: PlaybackOffer
        let description: SessionDescription
        switch parsed {
        case .failure(let error): return .failure(error)
        case .success(let d): description = d
        }
        do throws(NegotiationError) {
            offer = try PlaybackOffer(description)
        } catch {
            return .failure(RoomError(.negotiationFailed, error.reason))
        }
        let publisher = members(of: request.room).first { id in
            guard let p = participants[id], !p.tracks.isEmpty, p.publisher != nil || p.remote != nil else { return false }
            return target.map { $0 == p.identity } ?? true
        }
        guard let publisher, let published = participants[publisher] else {
            let who = target.map { "'\($0)' has" } ?? "nobody in room '\(request.room)' has"
            return .failure(RoomError(.nothingPublished, "\(who) published anything yet"))
        }
        let sources = published.tracks.compactMap { info -> PlaybackSource? in
            guard let codec = publishedDescription(of: info.id, by: publisher)?.codecs.first else { return nil }
            // An RTX SSRC for every track, whatever the publisher
            // negotiated: the worker resends from its own buffer, so the
            // client's offer alone decides whether it is used (the answerer
            // drops it where the client offers no RTX for the codec).
            return PlaybackSource(
                trackID: info.id, streamID: publisher.rawValue, codec: codec, ssrc: nextSSRC(), rtxSSRC: nextSSRC(),
                cname: "swiftlet")
        }
        var state = PlaybackState(
            credentials: .random(), answerer: PlaybackAnswerer(sessionID: nextSessionID()), publisher: publisher)
        guard let room = rooms[request.room] else { return .failure(RoomError(.nothingPublished, "no room")) }
        let worker = workerForNewParticipant(in: room.name)
        let local = LocalTransportParameters(
            credentials: state.credentials, fingerprint: media.fingerprint,
            candidates: media.workers[worker % media.workers.count])
        let answer = state.answerer.makeAnswer(to: offer, sources: sources, local: local)
        guard !answer.assignments.isEmpty else {
            return .failure(
                RoomError(.negotiationFailed, "the offer receives none of the publisher's tracks (kinds or codecs differ)"))
        }
        let (id, session, joined) = addHTTPParticipant(request, kind: .whep)
        place(id, on: worker)
        var effects = joined
        // The worker writes the client's header-extension ids, not ours:
        // the client offered them (PlaybackAnswerer.makeAnswer).
        var remote = offer.transport
        remote.egressHeaderExtensions = answer.headerExtensions
        effects.append(
            .media(
                .openTransport(
                    room: room.name, worker: worker, participant: id, role: .subscriber, local: state.credentials,
                    remote: remote)))
        for a in answer.assignments {
            state.tracks[a.track.trackID] = a.track
            effects.append(.media(.forward(room: room.name, trackID: a.track.trackID, subscriber: id, outgoing: a.track)))
        }
        participants[id]?.playback = state
        return .success(
            HTTPSessionAnswer(
                participant: id, session: session, answer: answer.description.text, etag: "\"\(state.credentials.ufrag)\"",
                effects: effects))
    }

    /// Whether `session` is a live session of `kind` in `room`.
    package func hasSession(_ kind: HTTPSessionKind, room: String, session: String) -> Bool {
        httpParticipant(kind, room: room, session: session) != nil
    }

    /// DELETE on a session's Location: the participant leaves (the others
    /// see `participant-left`, its media is released). nil when there is no
    /// such session.
    package mutating func endSession(_ kind: HTTPSessionKind, room: String, session: String) -> [RoomEffect]? {
        guard let id = httpParticipant(kind, room: room, session: session) else { return nil }
        return remove(id, reason: "left")
    }

    /// The media layer reports a transport failed or closed. An HTTP
    /// participant has no other way to leave, so it is removed; a WebSocket
    /// participant stays (its client renegotiates or leaves).
    package mutating func transportFailed(_ participant: ParticipantID, now: Instant) -> [RoomEffect] {
        guard let p = participants[participant], p.kind != .webSocket else { return [] }
        return remove(participant, reason: "transport failed")
    }

    // MARK: Helpers

    private func httpParticipant(_ kind: HTTPSessionKind, room: String, session: String) -> ParticipantID? {
        guard let id = httpSessions[session], let p = participants[id], p.room == room else { return nil }
        switch (kind, p.kind) {
        case (.whip, .whip), (.whep, .whep): return id
        default: return nil
        }
    }

    func refuseHTTPSession(_ request: JoinRequest) -> RoomError? {
        if isDraining { return RoomError(.draining, "the server is shutting down") }
        if findParticipant(identity: request.identity, room: request.room) != nil {
            return RoomError(.identityInUse, "'\(request.identity)' is already in room '\(request.room)'")
        }
        if let mode = rooms[request.room]?.mode, mode != .sfu {
            return RoomError(.modeMismatch, "room '\(request.room)' is a \(mode.rawValue) room: WHIP/WHEP need an SFU room")
        }
        return refuseEntry(to: request.room)
    }

    /// Creates the participant (no connection) and enters it into its
    /// room, creating an SFU room if needed: `participant-joined` to the
    /// others.
    private mutating func addHTTPParticipant(
        _ request: JoinRequest, kind: ParticipantKind
    ) -> (ParticipantID, session: String, effects: [RoomEffect]) {
        let id = ParticipantID(ids.next(prefix: "PA_"))
        let session = HTTPSessionID.make(ids.next(prefix: "SE_"), node: sessionNode)
        var p = Participant(id: id, identity: request.identity, grants: request.grants, room: request.room, connection: nil)
        p.kind = kind
        p.session = session
        participants[id] = p
        httpSessions[session] = id
        return (id, session, enter(id, room: request.room, resumed: false, mode: .sfu))
    }
}
