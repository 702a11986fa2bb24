import NetIO
import RoomProtocol
import Rooms

/// The ids a log line carries, kept beside the rooms: the directory knows
/// participants, but not remote addresses or which identity a connection
/// proved. Bounded by the open connections and the participants present.
struct LogIDs {
    struct Connection {
        var remote: String?
        var identity: String?
        var room: String?
        var participant: ParticipantID?
    }
    struct Participant {
        var identity: String?
        var room: String
        var remote: String? = nil
        /// "whip" or "whep" for HTTP sessions; nil for the room WebSocket.
        var kind: String? = nil
        var session: String? = nil
    }
    var connections: [ConnectionID: Connection] = [:]
    var participants: [ParticipantID: Participant] = [:]
    /// WHIP/WHEP session id to its participant; the id is never logged.
    var sessions: [String: ParticipantID] = [:]
}

extension RoomService {
    /// room, identity, participant, connection and remote address of a
    /// WebSocket connection, as far as they are known.
    func fields(_ connection: ConnectionID) -> [(String, String)] {
        let c = state.withLock { $0.logIDs.connections[connection] } ?? LogIDs.Connection()
        var out: [(String, String)] = []
        if let room = c.room { out.append(("room", room)) }
        if let identity = c.identity { out.append(("identity", identity)) }
        if let participant = c.participant { out.append(("participant", participant.rawValue)) }
        out.append(("conn", connection.description))
        if let remote = c.remote { out.append(("remote", remote)) }
        return out
    }

    static func fields(_ participant: ParticipantID, _ p: LogIDs.Participant) -> [(String, String)] {
        var out: [(String, String)] = [("room", p.room)]
        if let identity = p.identity { out.append(("identity", identity)) }
        out.append(("participant", participant.rawValue))
        if let kind = p.kind { out.append(("via", kind)) }
        if let remote = p.remote { out.append(("remote", remote)) }
        return out
    }

    /// Logs `participant`'s departure once, when it is no longer a member
    /// of its room (the effects that announce a leave are performed after
    /// the directory changed).
    func logDeparture(_ participant: ParticipantID) {
        let gone: LogIDs.Participant? = state.withLock { s in
            guard let p = s.logIDs.participants[participant] else { return nil }
            if s.directory.members(of: p.room).contains(participant) { return nil }
            s.logIDs.participants[participant] = nil
            if let session = p.session { s.logIDs.sessions[session] = nil }
            return p
        }
        if let gone { log(.info, "left", Self.fields(participant, gone)) }
    }

    /// After a timeout: everyone whose grace period ended (a mesh room's
    /// last member leaves without an effect that names it).
    func logDepartures() {
        let ids = state.withLock { Array($0.logIDs.participants.keys) }
        for id in ids { logDeparture(id) }
    }

    func participant(on connection: ConnectionID) -> ParticipantID? {
        state.withLock { $0.logIDs.connections[connection]?.participant }
    }
}
