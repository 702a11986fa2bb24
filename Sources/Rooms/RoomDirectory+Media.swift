import ICE
import Negotiation
import RoomProtocol
import SDP
import Wire

/// SFU media: publisher and subscriber transports, track publication, and
/// who receives what. Every participant with the subscribe grant receives
/// every track of its room (auto-subscribe) unless it unsubscribes.
extension RoomDirectory {
    /// A WebSocket `publish`: the answer goes back as `publish-answer`.
    mutating func publish(_ p: Participant, parsed: Result<SessionDescription, RoomError>) -> [RoomEffect] {
        switch checkPublishOffer(grants: p.grants, parsed: parsed, acceptsDataChannels: true) {
        case .failure(let error): return send(p.id, .error(code: error.code, message: error.message))
        case .success(let offer):
            guard let applied = applyPublish(p, offer: offer) else {
                return send(p.id, .error(code: .negotiationFailed, message: "this server has no media workers"))
            }
            let own = (participants[p.id]?.publisher?.tracks ?? [:]).sorted { $0.key < $1.key }.map { id, d in
                OwnTrack(id: id, kind: d.kind == .audio ? .audio : .video, mid: d.mid.description)
            }
            return applied.transport + send(p.id, .publishAnswer(sdp: applied.answer, tracks: own)) + applied.tracks
        }
    }

    /// Everything that can refuse a publish offer, before any state
    /// changes: the grant, media workers, the SDP itself (parsed under
    /// `RoomLimits` by the caller), the track limit. A room participant's
    /// publisher transport takes a data channel section; a WHIP session's
    /// does not (`acceptsDataChannels`).
    func checkPublishOffer(
        grants: Grants, parsed: Result<SessionDescription, RoomError>, acceptsDataChannels: Bool
    )
        -> Result<PublishOffer, RoomError>
    {
        guard grants.publish else { return .failure(RoomError(.forbidden, "your token has no publish grant")) }
        guard configuration.media != nil else {
            return .failure(RoomError(.negotiationFailed, "this server has no media workers"))
        }
        let description: SessionDescription
        switch parsed {
        case .failure(let error): return .failure(error)
        case .success(let d): description = d
        }
        let offer: PublishOffer
        do throws(NegotiationError) {
            offer = try PublishOffer(description, acceptsDataChannels: acceptsDataChannels)
        } catch {
            return .failure(RoomError(.negotiationFailed, error.reason))
        }
        let sending = offer.tracks.filter(\.isSending).count
        guard sending > 0 else { return .failure(RoomError(.negotiationFailed, "the offer sends nothing")) }
        // After the offer applies, the participant publishes exactly its
        // sending sections (the others stop), so this bounds the total.
        let limit = configuration.limits.tracksPerParticipant
        guard sending <= limit else {
            return .failure(RoomError(.tooManyTracks, "the offer sends \(sending) tracks; at most \(limit) per participant"))
        }
        return .success(offer)
    }

    /// What a checked publish offer does, shared by the WebSocket and WHIP
    /// paths, which differ only in how the answer reaches the client:
    /// `transport` (open the publisher transport or update its remote
    /// parameters) comes before the answer, `tracks` (published and
    /// stopped tracks, subscriptions, renegotiations) after it.
    mutating func applyPublish(
        _ p: Participant, offer: PublishOffer
    )
        -> (transport: [RoomEffect], answer: String, tracks: [RoomEffect])?
    {
        guard let media = configuration.media, let room = rooms[p.room] else { return nil }
        var transport: [RoomEffect] = []
        var state: PublisherState
        let (worker, candidates) = candidates(for: p.id, media)
        if let existing = p.publisher {
            state = existing
            transport.append(.media(.setRemote(room: room.name, participant: p.id, role: .publisher, remote: offer.transport)))
        } else {
            state = PublisherState(credentials: .random(), answerer: PublishAnswerer(sessionID: nextSessionID()))
            transport.append(
                .media(
                    .openTransport(
                        room: room.name, worker: worker, participant: p.id, role: .publisher,
                        local: state.credentials, remote: offer.transport)))
        }
        let local = LocalTransportParameters(
            credentials: state.credentials, fingerprint: media.fingerprint, candidates: candidates)
        let answer = state.answerer.makeAnswer(to: offer, local: local)
        if let data = offer.dataChannel, !state.dataChannels {
            state.dataChannels = true
            transport.append(
                .media(.enableDataChannels(room: room.name, participant: p.id, remotePort: data.remotePort)))
        }

        // Tracks that appeared, and tracks whose m-section stopped sending.
        var published: [(String, PublishedTrackDescription)] = []
        for description in offer.tracks where description.isSending {
            if state.tracks.contains(where: { $0.value.mid == description.mid }) { continue }
            let trackID = ids.next(prefix: "TR_")
            state.tracks[trackID] = description
            published.append((trackID, description))
        }
        let stopped = state.tracks.filter { entry in !offer.tracks.contains { $0.mid == entry.value.mid && $0.isSending } }.map(
            \.key)
        participants[p.id]?.publisher = state
        var effects: [RoomEffect] = []
        for trackID in stopped.sorted() { effects += unpublish(p.id, trackID: trackID) }
        for (trackID, description) in published {
            let info = TrackInfo(
                id: trackID, kind: description.kind == .audio ? .audio : .video,
                layers: description.simulcast.map(\.rid.description))
            participants[p.id]?.tracks.append(info)
            effects.append(
                .media(.addIncomingTrack(room: room.name, participant: p.id, trackID: trackID, description: description)))
            effects += broadcast(to: room.name, except: p.id, .trackPublished(participantID: p.id, track: info))
            if !room.isCallRoom, let publisher = participants[p.id] {
                record(.trackPublished(room: room.name, participant: publisher.info, track: info))
            }
            for member in room.members where member != p.id && participants[member]?.grants.subscribe == true {
                effects += subscribe(member, to: trackID, of: p.id, renegotiate: false)
            }
        }
        for member in room.members where member != p.id { effects += renegotiate(member) }
        return (transport, answer.text, effects)
    }

    /// Starts forwarding `trackID` (published by `publisher`) to `member`.
    mutating func subscribe(
        _ member: ParticipantID, to trackID: String, of publisher: ParticipantID, renegotiate again: Bool = true
    )
        -> [RoomEffect]
    {
        guard let media = configuration.media, let m = participants[member], m.kind == .webSocket, let room = rooms[m.room],
            let description = publishedDescription(of: trackID, by: publisher), let codec = description.codecs.first
        else { return [] }
        if m.subscriber?.subscriptions[trackID] != nil { return [] }
        // Checked before a transport opens: a refused subscription leaves
        // nothing on the worker.
        let limit = configuration.limits.subscriptionsPerParticipant
        guard (m.subscriber?.subscriptions.count ?? 0) < limit else {
            return send(
                member,
                .error(code: .tooManySubscriptions, message: "you receive \(limit) tracks already; \(trackID) is not sent"))
        }
        var effects: [RoomEffect] = []
        var state: SubscriberState
        if let existing = m.subscriber {
            state = existing
        } else {
            let credentials = ICECredentials.random()
            let (worker, candidates) = candidates(for: member, media)
            let local = LocalTransportParameters(
                credentials: credentials, fingerprint: media.fingerprint, candidates: candidates)
            state = SubscriberState(
                credentials: credentials, builder: SubscriberOfferBuilder(sessionID: nextSessionID(), local: local))
            effects.append(
                .media(
                    .openTransport(
                        room: room.name, worker: worker, participant: member, role: .subscriber,
                        local: credentials, remote: nil)))
        }
        // Each subscriber's copy has its own SSRC; the payload types stay
        // the publisher's (the subscriber answers our offer with them).
        // Where the publisher negotiated RTX the subscriber gets an RTX
        // stream of its own too: NACKed packets are resent on it (RFC 4588
        // section 4), and bandwidth probes are padding on it.
        let ssrc = nextSSRC()
        let outgoing = OutgoingTrack(
            kind: description.kind,
            codec: CodecDescription(
                codec: codec.codec, payloadType: codec.payloadType, clockRate: codec.clockRate,
                channels: codec.channels, formatParameters: codec.formatParameters,
                rtxPayloadType: codec.rtxPayloadType, feedback: codec.feedback),
            ssrc: ssrc, rtxSSRC: codec.rtxPayloadType == nil ? nil : nextSSRC(), streamID: publisher.rawValue,
            trackID: trackID, cname: "swiftlet")
        do {
            try state.builder.add(track: outgoing)
        } catch {
            return effects
        }
        state.subscriptions[trackID] = outgoing
        participants[member]?.subscriber = state
        effects.append(.media(.forward(room: room.name, trackID: trackID, subscriber: member, outgoing: outgoing)))
        if let preference = state.preferences[trackID] {
            effects.append(
                .media(.setPreference(room: room.name, trackID: trackID, subscriber: member, preference: preference)))
        }
        if again { effects += renegotiate(member) }
        return effects
    }

    /// What a published track's m-section said: a local publisher's
    /// offer, or another node's record of it (the cascade).
    func publishedDescription(of trackID: String, by publisher: ParticipantID) -> PublishedTrackDescription? {
        guard let p = participants[publisher] else { return nil }
        return p.publisher?.tracks[trackID] ?? p.remote?.tracks[trackID]?.description
    }

    mutating func unsubscribe(_ member: ParticipantID, from trackID: String) -> [RoomEffect] {
        // A WHEP player cannot renegotiate: its section just goes quiet.
        if participants[member]?.playback?.tracks.removeValue(forKey: trackID) != nil, let room = participants[member]?.room {
            return [.media(.stopForward(room: room, trackID: trackID, subscriber: member))]
        }
        guard var state = participants[member]?.subscriber, state.subscriptions.removeValue(forKey: trackID) != nil,
            let room = participants[member]?.room
        else { return [] }
        try? state.builder.remove(trackID: trackID)
        participants[member]?.subscriber = state
        return [.media(.stopForward(room: room, trackID: trackID, subscriber: member))] + renegotiate(member)
    }

    /// Sends a new subscriber offer when the m-sections changed and no
    /// offer is outstanding (only the server offers on this transport, so
    /// there is no glare; changes during an outstanding offer wait for the
    /// answer).
    mutating func renegotiate(_ member: ParticipantID) -> [RoomEffect] {
        guard var state = participants[member]?.subscriber, state.builder.state == .stable, state.builder.needsRenegotiation,
            !state.builder.activeMIDs.isEmpty || state.remoteKnown
        else { return [] }
        guard let offer = try? state.builder.createOffer() else { return [] }
        participants[member]?.subscriber = state
        return send(member, .subscriberOffer(sdp: offer.text, version: Int(state.builder.sessionVersion)))
    }

    mutating func applySubscriberAnswer(
        _ p: Participant, parsed: Result<SessionDescription, RoomError>, version: Int
    ) -> [RoomEffect] {
        guard var state = p.subscriber else {
            return send(p.id, .error(code: .negotiationFailed, message: "no subscriber offer is outstanding"))
        }
        guard version == Int(state.builder.sessionVersion) else {
            return send(
                p.id,
                .error(code: .negotiationFailed, message: "answer to offer \(version), expected \(state.builder.sessionVersion)"))
        }
        let description: SessionDescription
        switch parsed {
        case .failure(let error): return send(p.id, .error(code: error.code, message: error.message))
        case .success(let d): description = d
        }
        let remote: RemoteTransportParameters
        do throws(NegotiationError) {
            remote = try state.builder.applyAnswer(description)
        } catch {
            return send(p.id, .error(code: .negotiationFailed, message: error.reason))
        }
        var effects: [RoomEffect] = []
        if !state.remoteKnown {
            state.remoteKnown = true
            effects.append(.media(.setRemote(room: p.room, participant: p.id, role: .subscriber, remote: remote)))
        }
        // Sections the client rejected: it decodes none of their codecs
        // (a browser without the publisher's H.264 profile). Those tracks
        // are not sent to it; the others are.
        for trackID in state.builder.refusedTrackIDs {
            guard let outgoing = state.subscriptions.removeValue(forKey: trackID) else { continue }
            effects.append(.media(.stopForward(room: p.room, trackID: trackID, subscriber: p.id)))
            let fmtp = outgoing.codec.formatParameters.map { " (\($0))" } ?? ""
            effects += send(
                p.id,
                .error(
                    code: .negotiationFailed,
                    message:
                        "track \(trackID) is not sent to you: your answer rejected its \(outgoing.codec.codec.encodingName)\(fmtp)"
                ))
        }
        participants[p.id]?.subscriber = state
        return effects + renegotiate(p.id)
    }

    /// A track stops: nobody receives it any more.
    mutating func unpublish(_ publisher: ParticipantID, trackID: String) -> [RoomEffect] {
        guard let p = participants[publisher], p.publisher?.tracks[trackID] != nil else {
            return send(publisher, .error(code: .unknownTrack, message: "no track \(trackID) of yours"))
        }
        participants[publisher]?.publisher?.tracks[trackID] = nil
        participants[publisher]?.tracks.removeAll { $0.id == trackID }
        if rooms[p.room]?.isCallRoom == false {
            record(.trackUnpublished(room: p.room, participant: p.info, trackID: trackID))
        }
        var effects: [RoomEffect] = [.media(.removeIncomingTrack(room: p.room, participant: publisher, trackID: trackID))]
        effects += broadcast(to: p.room, except: publisher, .trackUnpublished(participantID: publisher, trackID: trackID))
        for member in members(of: p.room) where member != publisher { effects += unsubscribe(member, from: trackID) }
        return effects
    }

    /// On entering an SFU room: receive what is already published there.
    mutating func subscribeToExistingTracks(_ member: ParticipantID) -> [RoomEffect] {
        guard let m = participants[member], m.kind == .webSocket, m.grants.subscribe, rooms[m.room]?.mode == .sfu else {
            return []
        }
        var effects: [RoomEffect] = []
        for other in members(of: m.room) where other != member {
            for track in participants[other]?.tracks ?? [] {
                effects += subscribe(member, to: track.id, of: other, renegotiate: false)
            }
        }
        return effects + renegotiate(member)
    }

    /// On leaving a room: its tracks stop for everyone; its transports go.
    mutating func releaseMedia(_ id: ParticipantID) -> [RoomEffect] {
        guard let p = participants[id] else { return [] }
        var effects: [RoomEffect] = []
        for track in p.tracks {
            for member in members(of: p.room) where member != id { effects += unsubscribe(member, from: track.id) }
        }
        participants[id]?.publisher = nil
        participants[id]?.subscriber = nil
        participants[id]?.playback = nil
        participants[id]?.tracks = []
        unplace(id)
        return effects
    }

    mutating func handleMedia(
        _ message: ClientMessage, from p: Participant, parsedSDP: Result<SessionDescription, RoomError>?
    ) -> [RoomEffect] {
        guard rooms[p.room]?.mode == .sfu else {
            return send(p.id, .error(code: .wrongMode, message: "media goes peer to peer in a mesh room"))
        }
        switch message {
        case .publish(let sdp):
            return publish(p, parsed: parsedSDP ?? configuration.limits.parse(sdp, offer: true))
        case .subscriberAnswer(let sdp, let version):
            return applySubscriberAnswer(p, parsed: parsedSDP ?? configuration.limits.parse(sdp, offer: false), version: version)
        case .unpublish(let trackID): return unpublish(p.id, trackID: trackID)
        case .subscribe(let trackID):
            guard p.grants.subscribe else {
                return send(p.id, .error(code: .forbidden, message: "your token has no subscribe grant"))
            }
            guard
                let owner = members(of: p.room).first(where: { participants[$0]?.tracks.contains { $0.id == trackID } == true }),
                owner != p.id
            else { return send(p.id, .error(code: .unknownTrack, message: "no track \(trackID) in this room")) }
            return subscribe(p.id, to: trackID, of: owner)
        case .unsubscribe(let trackID):
            guard p.subscriber?.subscriptions[trackID] != nil else {
                return send(p.id, .error(code: .unknownTrack, message: "not subscribed to \(trackID)"))
            }
            return unsubscribe(p.id, from: trackID)
        case .setPreference(let trackID, let preference):
            guard p.subscriber?.subscriptions[trackID] != nil else {
                return send(p.id, .error(code: .unknownTrack, message: "not subscribed to \(trackID)"))
            }
            let limit = configuration.limits.subscriptionsPerParticipant
            participants[p.id]?.subscriber?.rememberPreference(preference, for: trackID, limit: limit)
            return [.media(.setPreference(room: p.room, trackID: trackID, subscriber: p.id, preference: preference))]
        default: return []
        }
    }
}

/// Worker placement (`WorkerPlacement`, docs/ARCHITECTURE.md "Rooms over
/// every worker").
extension RoomDirectory {
    /// The worker `id`'s transports go on, chosen on its first transport
    /// and kept until it leaves the room's media (`releaseMedia`).
    mutating func mediaWorker(for id: ParticipantID) -> Int {
        guard let p = participants[id] else { return 0 }
        if let w = p.worker { return w }
        let w = workerForNewParticipant(in: p.room)
        place(id, on: w)
        return w
    }

    /// Where a participant of `room` that has no worker yet would go.
    func workerForNewParticipant(in room: String) -> Int {
        let placedInRoom = members(of: room).filter { participants[$0]?.worker != nil }.count
        return configuration.placement.place(
            roomWorker: rooms[room]?.worker ?? 0, roomParticipants: placedInRoom, scores: workerScores())
    }

    mutating func place(_ id: ParticipantID, on w: Int) {
        guard participants[id] != nil, participants[id]?.worker == nil else { return }
        participants[id]?.worker = w
        placedParticipants[w, default: 0] += 1
    }

    /// Forgets `id`'s worker (its transports are released).
    mutating func unplace(_ id: ParticipantID) {
        guard let w = participants[id]?.worker else { return }
        participants[id]?.worker = nil
        placedParticipants[w] = max(0, (placedParticipants[w] ?? 1) - 1)
        if placedParticipants[w] == 0 { placedParticipants[w] = nil }
    }

    /// Each worker's load: the shell's last snapshot with what this
    /// directory placed (two transports a participant).
    func workerScores() -> [Double] {
        let workers = max(1, configuration.media?.workers.count ?? 1)
        return configuration.placement.scores(
            workers: workers, loads: configuration.workerLoads?(), placed: placedParticipants.mapValues { $0 * 2 })
    }

    /// The ICE candidates of `id`'s worker.
    mutating func candidates(for id: ParticipantID, _ media: MediaEndpoint) -> (worker: Int, candidates: [ICECandidate]) {
        let w = mediaWorker(for: id)
        return (w, media.workers.isEmpty ? [] : media.workers[w % media.workers.count])
    }
}
