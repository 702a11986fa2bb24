import Rooms
import Wire

/// The rooms side of the cascade (issue #15, docs/CLUSTER.md): what the
/// cluster agent reads of this node's rooms to write to Redis, and what it
/// applies of the other nodes' parts. Called on the agent's thread.
extension RoomService {
    /// This node's part of `room` (its local participants and tracks) and
    /// the remote tracks its participants receive, read in one lock.
    package func localPart(of room: String) -> (participants: [LocalShardParticipant], wants: [(trackID: String, node: String)]) {
        state.withLock { s in (s.directory.localShard(of: room), s.directory.wantedRemoteTracks(in: room)) }
    }

    /// What the other nodes serve of `room` now, by node (an absent node
    /// serves nothing any more): the room's members and tracks follow, and
    /// local clients hear of the changes.
    package func applyRemoteParts(of room: String, _ parts: [String: [RemoteParticipant]]) {
        let effects: [RoomEffect] = state.withLock { s in
            var effects: [RoomEffect] = []
            for node in s.directory.remoteNodes(in: room).subtracting(parts.keys).sorted() {
                effects += s.directory.setRemoteShard(room: room, node: node, participants: [])
            }
            for (node, participants) in parts.sorted(by: { $0.key < $1.key }) {
                effects += s.directory.setRemoteShard(room: room, node: node, participants: participants)
            }
            return effects
        }
        if !effects.isEmpty {
            log(.debug, "remote parts applied", [("room", room), ("nodes", parts.keys.sorted().joined(separator: ","))])
        }
        perform(effects)
    }

    /// Relay commands that name no client (`addRemoteSink`,
    /// `removeRemoteSink`): straight to the media plane.
    package func performMedia(_ commands: [MediaCommand]) {
        perform(commands.map { .media($0) })
    }
}
