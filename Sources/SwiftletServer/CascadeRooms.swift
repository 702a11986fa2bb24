import Cluster
import ClusterService
import MediaWorker
import RoomProtocol
import Rooms
import SignalingServer
import Synchronization
import WorkerRelay

/// The server's half of the cascade (issue #15, docs/CLUSTER.md), between
/// the cluster agent's exchange of room parts and the rooms layer:
///
/// - writing: this node's part of a room is its local participants and
///   their tracks, each track with the `RelayTrackID` this node sends it
///   under on node relays (one counter for the node: the far node tells
///   the tracks of one source node apart by it), and the remote tracks its
///   participants receive (`wants`);
/// - reading: the other live nodes' parts become the room's remote
///   members (`RoomService.applyRemoteParts`), and every part that wants
///   one of this node's tracks gets a relay sink for it
///   (`addRemoteSink`), removed when it no longer wants it.
///
/// A part is taken from a node only while this node has a relay to it:
/// its tracks could not arrive otherwise.
final class CascadeRooms: Sendable {
    let me: NodeID
    let service: RoomService
    let media: MediaPlane

    struct Sink: Hashable, Sendable {
        var trackID: String
        var node: String
        var relay: RelayTrackID
    }

    struct State {
        /// Relay ids of this node's tracks, by room and track.
        var relays: [String: [String: RelayTrackID]] = [:]
        var nextRelay: UInt32 = 1
        /// The sinks asked of the media plane, by room.
        var sinks: [String: Set<Sink>] = [:]
    }
    private let state = Mutex(State())

    init(me: NodeID, service: RoomService, media: MediaPlane) {
        self.me = me
        self.service = service
        self.media = media
    }

    var hooks: ClusterCascadeHooks {
        ClusterCascadeHooks(
            localPart: { [self] room, epoch in localPart(of: room, epoch: epoch) },
            partsRead: { [self] room, parts, _ in apply(room: room, parts: parts) },
            partEnded: { [self] room in
                state.withLock { s in
                    s.relays[room] = nil
                    s.sinks[room] = nil
                }
            })
    }

    func localPart(of room: String, epoch: Int64) -> RoomShardRecord {
        let (participants, wants) = service.localPart(of: room)
        let relays: [String: RelayTrackID] = state.withLock { s in
            var kept: [String: RelayTrackID] = [:]
            for p in participants {
                for t in p.tracks {
                    if let id = s.relays[room]?[t.id] {
                        kept[t.id] = id
                    } else {
                        kept[t.id] = RelayTrackID(s.nextRelay)
                        s.nextRelay = s.nextRelay == UInt32.max ? 1 : s.nextRelay + 1
                    }
                }
            }
            s.relays[room] = kept.isEmpty ? nil : kept
            return kept
        }
        return RoomShardRecord(
            room: room, node: me, epoch: epoch,
            participants: participants.map { p in
                ShardParticipant(
                    id: p.id.rawValue, identity: p.identity,
                    tracks: p.tracks.compactMap { t in
                        relays[t.id].map { ShardTrack(id: t.id, relay: $0.rawValue, description: t.description) }
                    })
            },
            wants: wants.map { WantedTrack(trackID: $0.trackID, node: NodeID(rawValue: $0.node)) })
    }

    /// The other nodes' parts of `room` among `parts`, those this node has
    /// a relay to.
    private func others(_ parts: [RoomShardRecord], room: String) -> [RoomShardRecord] {
        let relayed = Set(media.nodeRelaySlotTable.keys)
        return parts.filter { $0.room == room && $0.node != me && relayed.contains($0.node.rawValue) }
    }

    /// The other nodes' parts of `room` as the rooms layer's remote
    /// participants, by node.
    func remoteParticipants(_ parts: [RoomShardRecord], room: String) -> [String: [RemoteParticipant]] {
        var remote: [String: [RemoteParticipant]] = [:]
        for part in others(parts, room: room) {
            remote[part.node.rawValue] = part.participants.map { p in
                RemoteParticipant(
                    id: ParticipantID(p.id), identity: p.identity,
                    tracks: p.tracks.map { RemoteTrack(id: $0.id, relay: RelayTrackID($0.relay), description: $0.description) })
            }
        }
        return remote
    }

    func apply(room: String, parts: [RoomShardRecord]) {
        let others = others(parts, room: room)
        service.applyRemoteParts(of: room, remoteParticipants(others, room: room))
        // Sinks: this node's tracks another part wants.
        let commands: [MediaCommand] = state.withLock { s in
            let mine = s.relays[room] ?? [:]
            var wanted: Set<Sink> = []
            for part in others {
                for want in part.wants where want.node == me {
                    if let relay = mine[want.trackID] {
                        wanted.insert(Sink(trackID: want.trackID, node: part.node.rawValue, relay: relay))
                    }
                }
            }
            let had = s.sinks[room] ?? []
            s.sinks[room] = wanted.isEmpty ? nil : wanted
            let gone = had.subtracting(wanted).sorted { ($0.trackID, $0.node) < ($1.trackID, $1.node) }
            let new = wanted.subtracting(had).sorted { ($0.trackID, $0.node) < ($1.trackID, $1.node) }
            return gone.map { .removeRemoteSink(room: room, trackID: $0.trackID, node: $0.node) }
                + new.map { .addRemoteSink(room: room, trackID: $0.trackID, node: $0.node, relay: $0.relay) }
        }
        if !commands.isEmpty { service.performMedia(commands) }
    }
}
