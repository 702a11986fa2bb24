import Negotiation
import RoomProtocol
import SDP
import Wire
import WorkerRelay

/// A participant another node of the cluster serves, in a room that spans
/// nodes (the cascade, issue #15; docs/CLUSTER.md): what that node wrote
/// of it to Redis.
package struct RemoteParticipant: Equatable, Sendable {
    package var id: ParticipantID
    package var identity: String
    package var tracks: [RemoteTrack]
    package init(id: ParticipantID, identity: String, tracks: [RemoteTrack]) {
        self.id = id
        self.identity = identity
        self.tracks = tracks
    }
}

/// A track published on another node, as its node named it.
package struct RemoteTrack: Equatable, Sendable {
    package var id: String
    /// The id its node sends it under on node relays.
    package var relay: RelayTrackID
    package var description: PublishedTrackDescription
    package init(id: String, relay: RelayTrackID, description: PublishedTrackDescription) {
        self.id = id
        self.relay = relay
        self.description = description
    }
}

/// A local participant and its tracks: this node's part of a room, as it
/// writes it for the other nodes.
package struct LocalShardParticipant: Equatable, Sendable {
    package var id: ParticipantID
    package var identity: String
    package var tracks: [(id: String, description: PublishedTrackDescription)]
    package static func == (a: Self, b: Self) -> Bool {
        a.id == b.id && a.identity == b.identity && a.tracks.map(\.id) == b.tracks.map(\.id)
            && a.tracks.map(\.description) == b.tracks.map(\.description)
    }
}

/// A remote participant's state in the directory.
struct RemoteState {
    /// The node that serves it.
    let node: String
    /// Its tracks by id.
    var tracks: [String: RemoteTrack] = [:]
}

/// The cascade in the rooms layer: the participants other nodes serve
/// appear in the room as members without a connection
/// (`ParticipantKind.remote`), so local clients see them join and leave,
/// see their tracks published, and receive them as they receive a local
/// publisher's (auto-subscription included); the media plane gets
/// `addRemoteTrack` instead of `addIncomingTrack`. Nothing is ever sent to
/// a remote participant, it publishes nothing here, it cannot be called,
/// resumed or evicted by a join: its node does all that. A room with no
/// local member left is dropped with its remote members (this node no
/// longer serves any part of it).
extension RoomDirectory {
    /// What `node` serves of `room` now, as last read: participants and
    /// tracks that appeared are added, those gone are removed, with the
    /// messages and media commands that follow. Only SFU rooms that have a
    /// local member take remote state; anything else answers nothing.
    package mutating func setRemoteShard(
        room name: String, node: String, participants list: [RemoteParticipant]
    )
        -> [RoomEffect]
    {
        setRemoteShard(room: name, node: node, participants: list, beforeLocalMember: false)
    }

    /// `beforeLocalMember`: the room may have no local member yet (a WHEP
    /// offer is about to add one: `whepPlay(_:target:parsed:remoteParts:now:)`).
    mutating func setRemoteShard(
        room name: String, node: String, participants list: [RemoteParticipant], beforeLocalMember: Bool
    ) -> [RoomEffect] {
        guard let room = rooms[name], room.mode == .sfu, !room.isCallRoom,
            beforeLocalMember || room.members.contains(where: { participants[$0]?.remote == nil })
        else { return [] }
        var effects: [RoomEffect] = []
        let listed = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        // Gone: those this node showed for `node` that it no longer lists.
        for id in room.members where participants[id]?.remote?.node == node && listed[id] == nil {
            effects += remove(id, reason: "left")
        }
        for remote in list {
            if let existing = participants[remote.id] {
                // The same id as a local participant or another node's is
                // not taken: ids are random, so this is a damaged record.
                guard existing.remote?.node == node, existing.room == name else { continue }
                effects += updateRemoteTracks(remote)
            } else {
                participants[remote.id] = Participant(
                    id: remote.id, identity: remote.identity, grants: Grants(), room: name, connection: nil,
                    kind: .remote(node: node), remote: RemoteState(node: node))
                effects += enter(remote.id, room: name, resumed: false)
                effects += updateRemoteTracks(remote)
            }
        }
        return effects
    }

    /// Adds and removes a remote participant's tracks to match `remote`.
    private mutating func updateRemoteTracks(_ remote: RemoteParticipant) -> [RoomEffect] {
        guard let p = participants[remote.id], let state = p.remote else { return [] }
        var effects: [RoomEffect] = []
        let listed = Set(remote.tracks.map(\.id))
        for trackID in state.tracks.keys.sorted() where !listed.contains(trackID) {
            effects += unpublishRemote(p.id, trackID: trackID)
        }
        var added: [String] = []
        for track in remote.tracks where participants[p.id]?.remote?.tracks[track.id] == nil {
            // A track id taken in this room already (a damaged record) is
            // skipped: tracks are named by id alone in the room.
            guard !members(of: p.room).contains(where: { participants[$0]?.tracks.contains { $0.id == track.id } == true })
            else { continue }
            participants[p.id]?.remote?.tracks[track.id] = track
            let info = TrackInfo(
                id: track.id, kind: track.description.kind == .audio ? .audio : .video,
                layers: track.description.simulcast.map(\.rid.description))
            participants[p.id]?.tracks.append(info)
            effects.append(
                .media(
                    .addRemoteTrack(
                        room: p.room, participant: p.id, trackID: track.id, description: track.description,
                        node: state.node, relay: track.relay)))
            effects += broadcast(to: p.room, except: p.id, .trackPublished(participantID: p.id, track: info))
            added.append(track.id)
        }
        guard !added.isEmpty else { return effects }
        for member in members(of: p.room) where participants[member]?.remote == nil {
            guard participants[member]?.grants.subscribe == true else { continue }
            for trackID in added { effects += subscribe(member, to: trackID, of: p.id, renegotiate: false) }
            effects += renegotiate(member)
        }
        return effects
    }

    /// A remote track stops: nobody here receives it any more.
    private mutating func unpublishRemote(_ publisher: ParticipantID, trackID: String) -> [RoomEffect] {
        guard let p = participants[publisher], p.remote?.tracks[trackID] != nil else { return [] }
        participants[publisher]?.remote?.tracks[trackID] = nil
        participants[publisher]?.tracks.removeAll { $0.id == trackID }
        var effects: [RoomEffect] = [.media(.removeIncomingTrack(room: p.room, participant: publisher, trackID: trackID))]
        effects += broadcast(to: p.room, except: publisher, .trackUnpublished(participantID: publisher, trackID: trackID))
        for member in members(of: p.room) where member != publisher { effects += unsubscribe(member, from: trackID) }
        return effects
    }

    /// The nodes whose participants `room` shows now.
    package func remoteNodes(in room: String) -> Set<String> {
        Set(members(of: room).compactMap { participants[$0]?.remote?.node })
    }

    /// This node's part of `room`: its local participants (WebSocket,
    /// WHIP and WHEP) and the tracks they publish, in join order.
    package func localShard(of room: String) -> [LocalShardParticipant] {
        members(of: room).compactMap { id in
            guard let p = participants[id], p.remote == nil else { return nil }
            let published = p.publisher?.tracks ?? [:]
            let tracks = p.tracks.compactMap { info in published[info.id].map { (id: info.id, description: $0) } }
            return LocalShardParticipant(id: id, identity: p.identity, tracks: tracks)
        }
    }

    /// The remote tracks this node's participants receive in `room`, with
    /// the node each comes from: what this node asks the other nodes to
    /// send it.
    package func wantedRemoteTracks(in room: String) -> [(trackID: String, node: String)] {
        var owner: [String: String] = [:]
        for id in members(of: room) {
            guard let remote = participants[id]?.remote else { continue }
            for trackID in remote.tracks.keys { owner[trackID] = remote.node }
        }
        guard !owner.isEmpty else { return [] }
        var wanted: Set<String> = []
        for id in members(of: room) {
            guard let p = participants[id], p.remote == nil else { continue }
            for trackID in p.subscriber?.subscriptions.keys ?? [:].keys where owner[trackID] != nil { wanted.insert(trackID) }
            for trackID in p.playback?.tracks.keys ?? [:].keys where owner[trackID] != nil { wanted.insert(trackID) }
        }
        return wanted.sorted().map { (trackID: $0, node: owner[$0]!) }
    }

    /// Participants this node serves (remote ones not counted): its load.
    package var localParticipantCount: Int { participants.values.count { $0.remote == nil } }

    /// Whether a local participant is in `room` (then its remote members
    /// are kept current by the parts read from Redis).
    package func hasLocalMember(in room: String) -> Bool { rooms[room].map(hasLocalMember) ?? false }

    /// Whether a room member is a local one (exit drops a room without).
    func hasLocalMember(_ room: Room) -> Bool { room.members.contains { participants[$0]?.remote == nil } }
}

/// WHEP audiences beyond the room's home (issue #15): a WHEP offer may be
/// placed on a node that serves no part of its room yet. Its answer lists
/// the tracks it will play, so that node must know the other nodes' parts
/// first: the shell reads them from Redis before the offer is answered.
extension RoomDirectory {
    /// A WHEP offer with the other nodes' parts of its room (`parts`, by
    /// node, read just before). When this node has no local member in the
    /// room, the room is made here with them as its remote members, then
    /// the offer is answered as usual (it plays a remote publisher's
    /// tracks like a local one's); a refused offer leaves nothing behind.
    /// When the room has a local member, its remote members are current
    /// already and `parts` is not used.
    package mutating func whepPlay(
        _ request: JoinRequest, target: String?, parsed: Result<SessionDescription, RoomError>,
        remoteParts parts: [String: [RemoteParticipant]], now: Instant
    ) -> Result<HTTPSessionAnswer, RoomError> {
        if let room = rooms[request.room], hasLocalMember(room) || room.mode != .sfu || room.isCallRoom {
            return whepPlay(request, target: target, parsed: parsed, now: now)
        }
        guard !parts.isEmpty, refuseHTTPSession(request) == nil else {
            return whepPlay(request, target: target, parsed: parsed, now: now)
        }
        if rooms[request.room] == nil { rooms[request.room] = newRoom(request.room, mode: .sfu) }
        var effects: [RoomEffect] = []
        for (node, list) in parts.sorted(by: { $0.key < $1.key }) {
            effects += setRemoteShard(room: request.room, node: node, participants: list, beforeLocalMember: true)
        }
        switch whepPlay(request, target: target, parsed: parsed, now: now) {
        case .success(var answer):
            answer.effects = effects + answer.effects
            return .success(answer)
        case .failure(let error):
            // Nothing was performed: the remote members go without a word
            // or a media command, and the room with the last of them.
            for id in members(of: request.room) where participants[id]?.remote != nil { _ = remove(id, reason: "left") }
            if rooms[request.room]?.members.isEmpty == true { rooms[request.room] = nil }
            return .failure(error)
        }
    }
}

/// A WHIP/WHEP session id (the last segment of its Location). In a
/// cluster it names the node that holds the session after an `@`
/// (`SE_...@node~nonce`): node names use letters, digits, `-`, `_` and
/// `.`, so the `@` is unambiguous, and any node that receives the
/// session's PATCH or DELETE knows where to send it.
package enum HTTPSessionID {
    package static func make(_ local: String, node: String?) -> String {
        node.map { "\(local)@\($0)" } ?? local
    }

    /// The node a session id names, if any.
    package static func node(of session: String) -> String? {
        guard let at = session.lastIndex(of: "@") else { return nil }
        let node = session[session.index(after: at)...]
        return node.isEmpty ? nil : String(node)
    }
}
