import Cluster
import NetIO
import Wire

/// What the cascade needs from the server (issue #15, docs/CLUSTER.md): its
/// part of a room as a record to write, and what to do with the records of
/// a room's parts that the agent read. Both are called on the agent's
/// thread, never under one of the agent's locks.
package struct ClusterCascadeHooks: Sendable {
    /// This node's part of `room` at `epoch`.
    package var localPart: @Sendable (_ room: String, _ epoch: Int64) -> RoomShardRecord
    /// Every part of `room` as read now (this node's included), with the
    /// live nodes of the last refresh.
    package var partsRead: @Sendable (_ room: String, _ parts: [RoomShardRecord], _ nodes: [NodeRecord]) -> Void
    /// This node's part of `room` was deleted: the room ended here.
    package var partEnded: @Sendable (_ room: String) -> Void

    package init(
        localPart: @escaping @Sendable (_ room: String, _ epoch: Int64) -> RoomShardRecord,
        partsRead: @escaping @Sendable (_ room: String, _ parts: [RoomShardRecord], _ nodes: [NodeRecord]) -> Void,
        partEnded: @escaping @Sendable (_ room: String) -> Void
    ) {
        self.localPart = localPart
        self.partsRead = partsRead
        self.partEnded = partEnded
    }
}

/// The cascade's exchange through Redis, every `ClusterTiming.cascadeInterval`
/// on the agent's thread: each local room's part is written when it changed
/// (and at least once a refresh interval, so that it outlives no node: it
/// expires with the record lifetime), the parts of rooms that ended here
/// are deleted, and every part of each local room is read back and handed
/// to the server. Truth lives in these keys: a node that missed anything
/// (Redis away, a restart) is back in step at its next successful step.
extension ClusterAgent {
    package func setCascadeHooks(_ hooks: ClusterCascadeHooks) {
        cascadeHooks.withLock { $0 = hooks }
    }

    /// For `/metrics`: rooms whose part this node keeps written, parts too
    /// large to write, whether the wake-up subscription is up, and the
    /// wake-ups it received.
    package var cascadeFigures: (partsWritten: Int, oversized: Int, subscribed: Bool, events: Int) {
        (
            writtenPartCount.load(ordering: .relaxed), oversizedParts.load(ordering: .relaxed),
            roomEvents.withLock { $0 }?.isSubscribed.load(ordering: .relaxed) ?? false,
            roomEvents.withLock { $0 }?.events.load(ordering: .relaxed) ?? 0
        )
    }

    /// Where a participant of `room` who joins as `identity` is served
    /// (nil: a WHIP or WHEP session, placed by capacity alone):
    /// the node whose part of the room lists that identity (a client
    /// joining again resumes there), else `ShardPlacement`: the home while
    /// it holds fewer than its `roomNodeCapacity`, else another node. The
    /// room is placed first when it has no live home. The placements this
    /// node made in the last refresh interval count too: a burst of joins
    /// through one node fills each part to its capacity before the parts'
    /// records show them. A part of the room served here is remembered as
    /// a shard.
    package func placeParticipant(_ room: String, identity: String?) throws(ClusterError) -> (home: RoomHome, servedBy: NodeID) {
        let home = try placeRoom(room)
        let (parts, nodes) = try onPlacingConnection { registry throws(ClusterError) in
            (try registry.readShards(room: room).records(atEpoch: home.epoch), try registry.liveNodes())
        }
        let live = Set(nodes.map(\.id))
        let target: NodeID
        if let identity,
            let holder = parts.first(where: { p in live.contains(p.node) && p.participants.contains { $0.identity == identity } })
        {
            target = holder.node
        } else {
            let now = MonotonicClock.now()
            let recent = recentPlacements.withLock { list in
                list.removeAll { now - $0.at > timing.refreshInterval }
                return list.filter { $0.room == room }
            }
            guard
                let decision = ShardPlacement.choose(
                    home: home, nodes: nodes, shards: parts,
                    placedRecently: Dictionary(recent.map { ($0.node, 1) }, uniquingKeysWith: +), preferringRegion: record.region)
            else { throw .roomFull(room) }
            target = decision.node
            recentPlacements.withLock { $0.append((room, target, now)) }
        }
        if target == record.id { serveHere(room, home: home) }
        return (home, target)
    }

    /// Every part of `room` at `epoch` as Redis holds it now (a WHEP offer
    /// about to be answered on a node with no part of the room yet). On the
    /// placement queue.
    package func readParts(of room: String, epoch: Int64) throws(ClusterError) -> [RoomShardRecord] {
        try onPlacingConnection { registry throws(ClusterError) in try registry.readShards(room: room).records(atEpoch: epoch) }
    }

    /// A participant of `room` is served here (a join another node proxied
    /// to this one chose it): a part of a room homed elsewhere is a shard.
    package func serveHere(_ room: String, home: RoomHome) {
        guard home.node != record.id else { return }
        claims.withLock { $0.rememberShard(room, epoch: home.epoch) }
    }

    /// One step of the exchange. A Redis error ends the step and is
    /// counted; the next step starts over.
    func syncParts(_ registry: ClusterRegistry, nodes: [NodeRecord], now: Instant) {
        guard let rooms = roomHooks.withLock({ $0 }), let hooks = cascadeHooks.withLock({ $0 }) else { return }
        let local = Set(rooms.localRooms())
        let epochs: [(String, Int64)] = claims.withLock { c in local.sorted().compactMap { r in c.epoch(of: r).map { (r, $0) } } }
        var changed: Set<String> = []
        do throws(ClusterError) {
            for (room, epoch) in epochs {
                let part = hooks.localPart(room, epoch)
                let bytes = part.encoded() ?? []
                let last = writtenParts[room]
                if let last, last.bytes == bytes, now - last.at < timing.refreshInterval { continue }
                // A changed part wakes the other nodes at once; the periodic
                // rewrite only keeps it from expiring.
                if try registry.writeShard(part, wakeUp: last?.bytes != bytes) {
                    if last?.bytes != bytes { changed.insert(room) }
                    writtenParts[room] = (bytes, now)
                } else {
                    oversizedParts.add(1, ordering: .relaxed)
                }
            }
            for room in writtenParts.keys.sorted() where !epochs.contains(where: { $0.0 == room }) {
                try registry.deleteShard(room: room, node: record.id)
                writtenParts[room] = nil
                hooks.partEnded(room)
            }
            // Each room's parts are read when a room event named it (or
            // every room, after a resubscription), when this node just
            // wrote a change, and at least once a refresh interval; at
            // every step while no subscription delivers wake-ups.
            let woken = wokenRooms.withLock { w in
                defer { w = (false, []) }
                return w
            }
            let polling = roomEvents.withLock { $0 }?.isSubscribed.load(ordering: .relaxed) != true
            for (room, _) in epochs {
                let due =
                    polling || woken.all || woken.rooms.contains(room) || changed.contains(room)
                    || partsReadAt[room].map { now - $0 >= timing.refreshInterval } ?? true
                guard due else { continue }
                hooks.partsRead(room, try registry.readShards(room: room).records, nodes)
                partsReadAt[room] = now
            }
            partsReadAt = partsReadAt.filter { local.contains($0.key) }
            writtenPartCount.store(writtenParts.count, ordering: .relaxed)
        } catch {
            redisErrors.add(1, ordering: .relaxed)
        }
    }
}
