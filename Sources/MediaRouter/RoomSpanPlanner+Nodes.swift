import Negotiation
import RoomProtocol
import Rooms
import WorkerRelay

// The cascade's half of the plan (issue #15; docs/CLUSTER.md, "Relays
// between nodes"): the node relays live on `nodeRelayWorker`, so every
// track that crosses between nodes passes through that worker, and the
// rings between this node's workers carry it the rest of the way.
//
// - A remote track (`addRemoteTrack`) is a track whose source is "node
//   slot S via the relay worker". With its first local subscription the
//   relay worker gets it (`addRelayedTrack(from: S)` under the id its
//   source node gave it); a subscriber on another worker then gets it
//   through a ring from the relay worker, as a local track's far
//   subscriber does. With its last local subscription it leaves the relay
//   worker again (rings first), so a node relay carries only what this
//   node's subscribers take.
// - A node sink (`addRemoteSink`) sends a local track to another node. If
//   its source is the relay worker, that worker sends it there; otherwise
//   the track first crosses the ring from its source to the relay worker
//   (the same ring the relay worker's own subscribers use, kept up while
//   either needs it), and the relay worker sends its copy on.
// - A track that came from a node never goes to another node (a remote
//   sink for a remote track is refused and counted), and a track crosses
//   at most one ring of this node: each packet crosses each node relay at
//   most once, and the workers' routers refuse any other chain.

extension RoomSpanPlanner {
    /// A track published on another node. The same track again (same
    /// publisher, description and origin) changes nothing: the cluster
    /// layer re-applies what it reads at every refresh. A different one
    /// under the same id replaces it, as a republish does.
    mutating func addRemoteTrack(
        _ room: inout RoomSpan, _ name: String, _ trackID: String, publisher: ParticipantID,
        description: PublishedTrackDescription, origin: NodeOrigin, _ out: inout [PlannedCommand]
    ) {
        if let old = room.tracks[trackID] {
            if old.origin == origin, old.publisher == publisher, old.description == description { return }
            removeTrack(&room, name, trackID, &out)
        }
        room.tracks[trackID] = PublishedTrack(
            publisher: publisher, description: description, source: Self.nodeRelayWorker, origin: origin)
        flushPending(&room, name, &out)
    }

    /// A remote track's first local subscription: the relay worker starts
    /// receiving it from its node.
    func holdRemoteTrack(_ room: inout RoomSpan, _ name: String, _ trackID: String, _ out: inout [PlannedCommand]) {
        guard let track = room.tracks[trackID], let origin = track.origin, !track.isHeldOnRelayWorker else { return }
        out.append(
            PlannedCommand(
                worker: Self.nodeRelayWorker,
                .addRelayedTrack(
                    room: name, publisher: track.publisher, trackID: trackID, description: track.description,
                    relay: origin.relay, from: origin.slot)))
        room.tracks[trackID]?.isHeldOnRelayWorker = true
    }

    /// A remote track's last local subscription ended (its rings are
    /// already gone with their subscribers): the relay worker drops it.
    func releaseRemoteTrackIfUnused(
        _ room: inout RoomSpan, _ name: String, _ trackID: String, _ out: inout [PlannedCommand]
    ) {
        guard let track = room.tracks[trackID], track.origin != nil, track.isHeldOnRelayWorker,
            !room.subscriptions.keys.contains(where: { $0.trackID == trackID })
        else { return }
        out.append(PlannedCommand(worker: Self.nodeRelayWorker, .removeRelayedTrack(room: name, trackID: trackID)))
        room.tracks[trackID]?.isHeldOnRelayWorker = false
    }

    /// Sends each waiting node sink whose track is known now, in arrival
    /// order; one for a remote track is refused (counted).
    mutating func flushPendingNodeSinks(_ room: inout RoomSpan, _ name: String, _ out: inout [PlannedCommand]) {
        guard !room.pendingNodeSinks.isEmpty else { return }
        var waiting: [PendingNodeSink] = []
        for p in room.pendingNodeSinks {
            guard let track = room.tracks[p.trackID] else {
                waiting.append(p)
                continue
            }
            // A track that came from a node never goes to another node.
            guard track.origin == nil else {
                ignoredCommands += 1
                continue
            }
            // The same sink again (a refresh): nothing to do.
            if room.nodeSinks[p.trackID]?[p.slot] == p.relay { continue }
            // Off the relay worker, the track first crosses its ring there
            // (the one the relay worker's own subscribers use, if any).
            openRingRelay(&room, name, p.trackID, to: Self.nodeRelayWorker, &out)
            out.append(
                PlannedCommand(
                    worker: Self.nodeRelayWorker, .addRelaySink(room: name, trackID: p.trackID, relay: p.relay, to: p.slot)))
            room.nodeSinks[p.trackID, default: [:]][p.slot] = p.relay
        }
        room.pendingNodeSinks = waiting
    }

    /// The node at `slot` no longer wants `trackID`: the relay worker
    /// stops sending it there, then the ring to the relay worker goes if
    /// nothing else needs it.
    mutating func removeNodeSink(
        _ room: inout RoomSpan, _ name: String, _ trackID: String, slot: Int, _ out: inout [PlannedCommand]
    ) {
        if let i = room.pendingNodeSinks.firstIndex(where: { $0.trackID == trackID && $0.slot == slot }) {
            room.pendingNodeSinks.remove(at: i)
            return
        }
        guard room.nodeSinks[trackID]?.removeValue(forKey: slot) != nil else { return }
        if room.nodeSinks[trackID]?.isEmpty == true { room.nodeSinks[trackID] = nil }
        out.append(PlannedCommand(worker: Self.nodeRelayWorker, .removeRelaySink(room: name, trackID: trackID, to: slot)))
        closeRingRelayIfUnused(&room, name, trackID, to: Self.nodeRelayWorker, &out)
    }
}

extension RoomSpanPlanner {
    /// The node at `slot` is no longer relayed to (dropped from the
    /// cluster's list; the relay worker's router drops its relay): in
    /// every room, each sink to it ends as `removeRemoteSink` ends one and
    /// each track from it as `removeIncomingTrack` removes one, so nothing
    /// of it is left to a node that later gets the same slot.
    package mutating func forgetNode(slot: Int) -> [PlannedCommand] {
        var out: [PlannedCommand] = []
        for name in rooms.keys.sorted() {
            guard var room = rooms[name] else { continue }
            room.pendingNodeSinks.removeAll { $0.slot == slot }
            for trackID in room.nodeSinks.keys.sorted() where room.nodeSinks[trackID]?[slot] != nil {
                removeNodeSink(&room, name, trackID, slot: slot, &out)
            }
            for trackID in room.tracks.keys.sorted() where room.tracks[trackID]?.origin?.slot == slot {
                room.pending.removeAll { $0.key.trackID == trackID }
                removeTrack(&room, name, trackID, &out)
            }
            rooms[name] = room.isEmpty ? nil : room
        }
        return out
    }
}
