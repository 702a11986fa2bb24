import Rooms

// Short, single-line descriptions for the log: message types as on the
// wire, media commands without their SDP-sized payloads.

extension ClientMessage {
    var typeName: String {
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

extension ServerMessage {
    var typeName: String {
        switch self {
        case .joined: "joined"
        case .participantJoined: "participant-joined"
        case .participantLeft: "participant-left"
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

extension MediaCommand {
    var summary: String {
        switch self {
        case .openTransport(let room, let worker, let participant, let role, _, _):
            "open \(role.rawValue) transport of \(participant) in '\(room)' on worker \(worker)"
        case .setRemote(let room, let participant, let role, _):
            "remote parameters for \(participant)'s \(role.rawValue) transport in '\(room)'"
        case .addIncomingTrack(let room, let participant, let track, let d):
            "track \(track) (\(d.kind.rawValue), mid \(d.mid)) from \(participant) in '\(room)'"
        case .removeIncomingTrack(let room, let participant, let track): "track \(track) of \(participant) in '\(room)' removed"
        case .forward(let room, let track, let subscriber, let outgoing):
            "forward \(track) to \(subscriber) as SSRC \(outgoing.ssrc) PT \(outgoing.codec.payloadType) in '\(room)'"
        case .stopForward(let room, let track, let subscriber): "stop forwarding \(track) to \(subscriber) in '\(room)'"
        case .setPreference(let room, let track, let subscriber, let p):
            "\(subscriber) prefers \(track) at max width \(p.maxWidth.map(String.init) ?? "any"), "
                + "max layer \(p.maxLayer.map(String.init) ?? "any") in '\(room)'"
        case .releaseParticipant(let room, let participant): "release \(participant) in '\(room)'"
        }
    }
}
