import Rooms

// Short, single-line descriptions for the log: media commands without
// their SDP-sized payloads (message types: `typeName`, RoomProtocol).

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
        case .setTrackMuted(let room, let participant, let track, let muted):
            "track \(track) of \(participant) in '\(room)' \(muted ? "muted" : "unmuted")"
        case .forward(let room, let track, let subscriber, let outgoing):
            "forward \(track) to \(subscriber) as SSRC \(outgoing.ssrc) PT \(outgoing.codec.payloadType) in '\(room)'"
        case .stopForward(let room, let track, let subscriber): "stop forwarding \(track) to \(subscriber) in '\(room)'"
        case .setPreference(let room, let track, let subscriber, let p):
            "\(subscriber) prefers \(track) at max width \(p.maxWidth.map(String.init) ?? "any"), "
                + "max layer \(p.maxLayer.map(String.init) ?? "any") in '\(room)'"
        case .releaseParticipant(let room, let participant): "release \(participant) in '\(room)'"
        case .addRemoteTrack(let room, let participant, let track, let d, let node, let relay):
            "track \(track) (\(d.kind.rawValue)) from \(participant) on node \(node) as \(relay) in '\(room)'"
        case .addRemoteSink(let room, let track, let node, let relay): "send \(track) to node \(node) as \(relay) in '\(room)'"
        case .removeRemoteSink(let room, let track, let node): "stop sending \(track) to node \(node) in '\(room)'"
        case .enableDataChannels(let room, let participant, let port):
            "data channels on \(participant)'s publisher transport (SCTP port \(port)) in '\(room)'"
        case .sendData(let room, let participant, let label, _, let payload):
            "\(payload.count)-byte data message to \(participant) on '\(label)' in '\(room)'"
        }
    }
}
