/// What a client sends over the room WebSocket (`/rtc`), one JSON object
/// per text message with a `type` member. docs/PROTOCOL.md documents each
/// with an example. The access token in `join` is verified by the
/// signalling shell before the rooms layer sees the message: `join` reaches
/// `RoomDirectory` as `JoinRequest`.
package enum ClientMessage: Equatable, Sendable {
    case join(token: String, mode: RoomMode?)
    /// Publisher transport: the client offers, the server answers.
    case publish(sdp: String)
    /// Subscriber transport: the client answers the server's offer.
    case subscriberAnswer(sdp: String, version: Int)
    case unpublish(trackID: String)
    case subscribe(trackID: String)
    case unsubscribe(trackID: String)
    /// Per-track receive preference: the largest width and/or simulcast
    /// layer wanted (width 0: paused).
    case setPreference(trackID: String, preference: ReceivePreference)
    case mute(trackID: String, muted: Bool)
    case leave
    case call(to: ParticipantID)
    case answerCall(CallID)
    case declineCall(CallID)
    case hangup(CallID)
    /// Mesh rooms: an opaque offer, answer or candidate for one peer.
    case meshSignal(to: ParticipantID, payload: JSONValue)
    case ping
}

extension ClientMessage: Codable {
    private enum Keys: String, CodingKey {
        case type, token, mode, sdp, version, trackId, maxWidth, maxLayer, muted, to, callId, payload
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "join":
            self = .join(
                token: try c.decode(String.self, forKey: .token), mode: try c.decodeIfPresent(RoomMode.self, forKey: .mode))
        case "publish": self = .publish(sdp: try c.decode(String.self, forKey: .sdp))
        case "subscriber-answer":
            self = .subscriberAnswer(
                sdp: try c.decode(String.self, forKey: .sdp), version: try c.decode(Int.self, forKey: .version))
        case "unpublish": self = .unpublish(trackID: try c.decode(String.self, forKey: .trackId))
        case "subscribe": self = .subscribe(trackID: try c.decode(String.self, forKey: .trackId))
        case "unsubscribe": self = .unsubscribe(trackID: try c.decode(String.self, forKey: .trackId))
        case "set-preference":
            self = .setPreference(
                trackID: try c.decode(String.self, forKey: .trackId),
                preference: ReceivePreference(
                    maxWidth: try c.decodeIfPresent(Int.self, forKey: .maxWidth),
                    maxLayer: try c.decodeIfPresent(Int.self, forKey: .maxLayer)))
        case "mute":
            self = .mute(trackID: try c.decode(String.self, forKey: .trackId), muted: try c.decode(Bool.self, forKey: .muted))
        case "leave": self = .leave
        case "call": self = .call(to: try c.decode(ParticipantID.self, forKey: .to))
        case "answer-call": self = .answerCall(try c.decode(CallID.self, forKey: .callId))
        case "decline-call": self = .declineCall(try c.decode(CallID.self, forKey: .callId))
        case "hangup": self = .hangup(try c.decode(CallID.self, forKey: .callId))
        case "mesh-signal":
            self = .meshSignal(
                to: try c.decode(ParticipantID.self, forKey: .to), payload: try c.decode(JSONValue.self, forKey: .payload))
        case "ping": self = .ping
        default:
            throw RoomProtocolError.unknownType(type)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(typeName, forKey: .type)
        switch self {
        case .join(let token, let mode):
            try c.encode(token, forKey: .token)
            try c.encodeIfPresent(mode, forKey: .mode)
        case .publish(let sdp):
            try c.encode(sdp, forKey: .sdp)
        case .subscriberAnswer(let sdp, let version):
            try c.encode(sdp, forKey: .sdp)
            try c.encode(version, forKey: .version)
        case .unpublish(let id):
            try c.encode(id, forKey: .trackId)
        case .subscribe(let id):
            try c.encode(id, forKey: .trackId)
        case .unsubscribe(let id):
            try c.encode(id, forKey: .trackId)
        case .setPreference(let id, let preference):
            try c.encode(id, forKey: .trackId)
            try c.encodeIfPresent(preference.maxWidth, forKey: .maxWidth)
            try c.encodeIfPresent(preference.maxLayer, forKey: .maxLayer)
        case .mute(let id, let muted):
            try c.encode(id, forKey: .trackId)
            try c.encode(muted, forKey: .muted)
        case .leave: break
        case .call(let to):
            try c.encode(to, forKey: .to)
        case .answerCall(let id):
            try c.encode(id, forKey: .callId)
        case .declineCall(let id):
            try c.encode(id, forKey: .callId)
        case .hangup(let id):
            try c.encode(id, forKey: .callId)
        case .meshSignal(let to, let payload):
            try c.encode(to, forKey: .to)
            try c.encode(payload, forKey: .payload)
        case .ping: break
        }
    }
}

extension ClientMessage {
    /// The `type` member on the wire.
    package var typeName: String {
        switch self {
        case .join: "join"
        case .publish: "publish"
        case .subscriberAnswer: "subscriber-answer"
        case .unpublish: "unpublish"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .setPreference: "set-preference"
        case .mute: "mute"
        case .leave: "leave"
        case .call: "call"
        case .answerCall: "answer-call"
        case .declineCall: "decline-call"
        case .hangup: "hangup"
        case .meshSignal: "mesh-signal"
        case .ping: "ping"
        }
    }
}
