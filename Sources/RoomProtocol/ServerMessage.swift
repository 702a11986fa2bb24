/// A track as other participants see it.
package struct TrackInfo: Equatable, Sendable, Codable {
    package enum Kind: String, Sendable, Codable { case audio, video }
    package var id: String
    package var kind: Kind
    package var muted: Bool
    /// Simulcast layers by rid, lowest first (empty: one layer).
    package var layers: [String]
    package init(id: String, kind: Kind, muted: Bool = false, layers: [String] = []) {
        self.id = id
        self.kind = kind
        self.muted = muted
        self.layers = layers
    }
}

/// One of the publisher's own tracks, in `publish-answer`: the server's
/// id for the m-section `mid` of its offer.
package struct OwnTrack: Equatable, Sendable, Codable {
    package var id: String
    package var kind: TrackInfo.Kind
    package var mid: String
    package init(id: String, kind: TrackInfo.Kind, mid: String) {
        self.id = id
        self.kind = kind
        self.mid = mid
    }
}

/// A participant as other participants see it.
package struct ParticipantInfo: Equatable, Sendable, Codable {
    package var id: ParticipantID
    package var identity: String
    package var tracks: [TrackInfo]
    /// Set by the server API (`update` of a participant); absent when empty.
    package var metadata: String?
    package init(id: ParticipantID, identity: String, tracks: [TrackInfo] = [], metadata: String? = nil) {
        self.id = id
        self.identity = identity
        self.tracks = tracks
        self.metadata = metadata
    }
}

/// What the server sends over the room WebSocket; docs/PROTOCOL.md.
package enum ServerMessage: Equatable, Sendable {
    case joined(participantID: ParticipantID, room: String, mode: RoomMode, participants: [ParticipantInfo], resumed: Bool)
    case participantJoined(ParticipantInfo)
    case participantLeft(ParticipantID)
    /// A participant's metadata changed (the server API): to everyone in
    /// its room, itself included.
    case participantUpdated(ParticipantInfo)
    case trackPublished(participantID: ParticipantID, track: TrackInfo)
    case trackUnpublished(participantID: ParticipantID, trackID: String)
    case trackMuted(participantID: ParticipantID, trackID: String, muted: Bool)
    /// The answer, and every track the publisher has now with its mid, so
    /// the client knows its own track ids (for `mute` and `unpublish`).
    case publishAnswer(sdp: String, tracks: [OwnTrack])
    case subscriberOffer(sdp: String, version: Int)
    case incomingCall(callID: CallID, from: ParticipantID, identity: String)
    /// To the caller: the call is placed and rings at `to`, whose
    /// identity is `identity` (the page shows names, not ids).
    case callRinging(callID: CallID, to: ParticipantID, identity: String)
    /// Both sides: the call is on; they are now in the private room `room`
    /// with `peer`, whose identity is `identity`.
    case callStarted(callID: CallID, room: String, peer: ParticipantID, identity: String)
    case callDeclined(callID: CallID)
    /// Either side hung up, or a participant of the call left.
    case callEnded(callID: CallID, reason: String)
    case meshSignal(from: ParticipantID, payload: JSONValue)
    /// The room's current speakers, loudest first (empty: silence).
    case activeSpeakers([SpeakerLevel])
    /// To a publisher (dynacast): which simulcast encodings of a track
    /// subscribers need; the client turns the others off.
    case publisherLayers(trackID: String, layers: [LayerActivity])
    /// To a subscriber: a track it receives was paused or resumed, or its
    /// forwarded spatial layer (0 lowest) changed.
    case streamState(trackID: String, state: StreamState, layer: Int?, reason: StreamStateReason)
    /// The server is draining (SIGTERM): it closes this session at
    /// `deadline` (Unix epoch milliseconds), `seconds` from when this was
    /// sent; the client should move to another server before then.
    case goingAway(reason: String, deadline: Int64, seconds: Int)
    case error(code: ErrorCode, message: String)
    case pong
}

extension ServerMessage: Codable {
    private enum Keys: String, CodingKey {
        case type, participantId, room, mode, participants, resumed, participant, track, trackId, muted, sdp, version
        case callId, from, identity, peer, reason, payload, code, message, speakers, layers, state, layer, tracks, to
        case deadline, seconds
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(typeName, forKey: .type)
        switch self {
        case .joined(let id, let room, let mode, let participants, let resumed):
            try c.encode(id, forKey: .participantId)
            try c.encode(room, forKey: .room)
            try c.encode(mode, forKey: .mode)
            try c.encode(participants, forKey: .participants)
            try c.encode(resumed, forKey: .resumed)
        case .participantJoined(let p):
            try c.encode(p, forKey: .participant)
        case .participantLeft(let id):
            try c.encode(id, forKey: .participantId)
        case .participantUpdated(let p):
            try c.encode(p, forKey: .participant)
        case .trackPublished(let id, let track):
            try c.encode(id, forKey: .participantId)
            try c.encode(track, forKey: .track)
        case .trackUnpublished(let id, let trackID):
            try c.encode(id, forKey: .participantId)
            try c.encode(trackID, forKey: .trackId)
        case .trackMuted(let id, let trackID, let muted):
            try c.encode(id, forKey: .participantId)
            try c.encode(trackID, forKey: .trackId)
            try c.encode(muted, forKey: .muted)
        case .publishAnswer(let sdp, let tracks):
            try c.encode(sdp, forKey: .sdp)
            try c.encode(tracks, forKey: .tracks)
        case .subscriberOffer(let sdp, let version):
            try c.encode(sdp, forKey: .sdp)
            try c.encode(version, forKey: .version)
        case .incomingCall(let id, let from, let identity):
            try c.encode(id, forKey: .callId)
            try c.encode(from, forKey: .from)
            try c.encode(identity, forKey: .identity)
        case .callRinging(let id, let to, let identity):
            try c.encode(id, forKey: .callId)
            try c.encode(to, forKey: .to)
            try c.encode(identity, forKey: .identity)
        case .callStarted(let id, let room, let peer, let identity):
            try c.encode(id, forKey: .callId)
            try c.encode(room, forKey: .room)
            try c.encode(peer, forKey: .peer)
            try c.encode(identity, forKey: .identity)
        case .callDeclined(let id):
            try c.encode(id, forKey: .callId)
        case .callEnded(let id, let reason):
            try c.encode(id, forKey: .callId)
            try c.encode(reason, forKey: .reason)
        case .meshSignal(let from, let payload):
            try c.encode(from, forKey: .from)
            try c.encode(payload, forKey: .payload)
        case .activeSpeakers(let speakers):
            try c.encode(speakers, forKey: .speakers)
        case .publisherLayers(let trackID, let layers):
            try c.encode(trackID, forKey: .trackId)
            try c.encode(layers, forKey: .layers)
        case .streamState(let trackID, let state, let layer, let reason):
            try c.encode(trackID, forKey: .trackId)
            try c.encode(state, forKey: .state)
            try c.encodeIfPresent(layer, forKey: .layer)
            try c.encode(reason, forKey: .reason)
        case .goingAway(let reason, let deadline, let seconds):
            try c.encode(reason, forKey: .reason)
            try c.encode(deadline, forKey: .deadline)
            try c.encode(seconds, forKey: .seconds)
        case .error(let code, let message):
            try c.encode(code, forKey: .code)
            try c.encode(message, forKey: .message)
        case .pong: break
        }
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "joined":
            self = .joined(
                participantID: try c.decode(ParticipantID.self, forKey: .participantId),
                room: try c.decode(String.self, forKey: .room),
                mode: try c.decode(RoomMode.self, forKey: .mode),
                participants: try c.decode([ParticipantInfo].self, forKey: .participants),
                resumed: try c.decode(Bool.self, forKey: .resumed))
        case "participant-joined": self = .participantJoined(try c.decode(ParticipantInfo.self, forKey: .participant))
        case "participant-left": self = .participantLeft(try c.decode(ParticipantID.self, forKey: .participantId))
        case "participant-updated": self = .participantUpdated(try c.decode(ParticipantInfo.self, forKey: .participant))
        case "track-published":
            self = .trackPublished(
                participantID: try c.decode(ParticipantID.self, forKey: .participantId),
                track: try c.decode(TrackInfo.self, forKey: .track))
        case "track-unpublished":
            self = .trackUnpublished(
                participantID: try c.decode(ParticipantID.self, forKey: .participantId),
                trackID: try c.decode(String.self, forKey: .trackId))
        case "track-muted":
            self = .trackMuted(
                participantID: try c.decode(ParticipantID.self, forKey: .participantId),
                trackID: try c.decode(String.self, forKey: .trackId),
                muted: try c.decode(Bool.self, forKey: .muted))
        case "publish-answer":
            self = .publishAnswer(
                sdp: try c.decode(String.self, forKey: .sdp),
                tracks: try c.decodeIfPresent([OwnTrack].self, forKey: .tracks) ?? [])
        case "subscriber-offer":
            self = .subscriberOffer(
                sdp: try c.decode(String.self, forKey: .sdp), version: try c.decode(Int.self, forKey: .version))
        case "incoming-call":
            self = .incomingCall(
                callID: try c.decode(CallID.self, forKey: .callId), from: try c.decode(ParticipantID.self, forKey: .from),
                identity: try c.decode(String.self, forKey: .identity))
        case "call-ringing":
            self = .callRinging(
                callID: try c.decode(CallID.self, forKey: .callId), to: try c.decode(ParticipantID.self, forKey: .to),
                identity: try c.decode(String.self, forKey: .identity))
        case "call-started":
            self = .callStarted(
                callID: try c.decode(CallID.self, forKey: .callId), room: try c.decode(String.self, forKey: .room),
                peer: try c.decode(ParticipantID.self, forKey: .peer), identity: try c.decode(String.self, forKey: .identity))
        case "call-declined": self = .callDeclined(callID: try c.decode(CallID.self, forKey: .callId))
        case "call-ended":
            self = .callEnded(
                callID: try c.decode(CallID.self, forKey: .callId), reason: try c.decode(String.self, forKey: .reason))
        case "mesh-signal":
            self = .meshSignal(
                from: try c.decode(ParticipantID.self, forKey: .from), payload: try c.decode(JSONValue.self, forKey: .payload))
        case "active-speakers": self = .activeSpeakers(try c.decode([SpeakerLevel].self, forKey: .speakers))
        case "publisher-layers":
            self = .publisherLayers(
                trackID: try c.decode(String.self, forKey: .trackId), layers: try c.decode([LayerActivity].self, forKey: .layers))
        case "stream-state":
            self = .streamState(
                trackID: try c.decode(String.self, forKey: .trackId), state: try c.decode(StreamState.self, forKey: .state),
                layer: try c.decodeIfPresent(Int.self, forKey: .layer),
                reason: try c.decode(StreamStateReason.self, forKey: .reason))
        case "going-away":
            self = .goingAway(
                reason: try c.decode(String.self, forKey: .reason), deadline: try c.decode(Int64.self, forKey: .deadline),
                seconds: try c.decode(Int.self, forKey: .seconds))
        case "error":
            self = .error(code: try c.decode(ErrorCode.self, forKey: .code), message: try c.decode(String.self, forKey: .message))
        case "pong": self = .pong
        default: throw RoomProtocolError.unknownType(type)
        }
    }
}

extension ServerMessage {
    /// The `type` member on the wire.
    package var typeName: String {
        switch self {
        case .joined: "joined"
        case .participantJoined: "participant-joined"
        case .participantLeft: "participant-left"
        case .participantUpdated: "participant-updated"
        case .trackPublished: "track-published"
        case .trackUnpublished: "track-unpublished"
        case .trackMuted: "track-muted"
        case .publishAnswer: "publish-answer"
        case .subscriberOffer: "subscriber-offer"
        case .incomingCall: "incoming-call"
        case .callRinging: "call-ringing"
        case .callStarted: "call-started"
        case .callDeclined: "call-declined"
        case .callEnded: "call-ended"
        case .meshSignal: "mesh-signal"
        case .activeSpeakers: "active-speakers"
        case .publisherLayers: "publisher-layers"
        case .streamState: "stream-state"
        case .goingAway: "going-away"
        case .error: "error"
        case .pong: "pong"
        }
    }
}
