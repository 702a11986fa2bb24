/// Which node serves a new participant of a room (issue #15, "Cascade"),
/// once the room has a home (`RoomClaim`): a pure rule over what the node
/// taking the join read from Redis, so every node answers the same from
/// the same records.
///
/// 1. The home, while it is live, takes participants
///    (`NodeRecord.acceptsParticipants`) and serves fewer of the room than
///    its `limits.roomNodeCapacity` (nil: unlimited, the room never
///    spreads).
/// 2. Else the shard with the fewest of the room's participants under its
///    capacity, among the nodes that already serve part of the room (a
///    `RoomShardRecord` at the home's epoch), are live and take
///    participants; the lowest id on a tie.
/// 3. Else a new shard: `RoomPlacement`'s rule (least loaded, the entry
///    node's region first, lowest id on a tie) among the live nodes that
///    accept rooms and hold no part of the room yet.
/// 4. Else none: the join is refused (the room is full).
///
/// A node's participants of the room are those of its shard record; the
/// home without a record yet serves none. Records of another epoch belong
/// to a stale copy and count for nothing. The home must be among `nodes`
/// to be chosen: a home the caller has no record of (its view predates
/// the home's first write) is passed over like a dead one, so a caller
/// that just claimed the room reads the home's record first
/// (`ClusterAgent.liveRecord`).
///
/// Capacity is soft: it is checked against records written at each
/// change and at least every refresh (2 s), so two joins placed between a
/// write and the next read may both land on the same node and take it
/// one past its capacity (bounded by the joins in that window); nothing
/// in Redis counts a room's participants atomically.
package enum ShardPlacement {
    package enum Decision: Equatable, Sendable {
        /// The room's home serves the participant.
        case home(NodeID)
        /// A node already serving part of the room.
        case shard(NodeID)
        /// A node that serves no part of the room yet: it creates its
        /// part (and its record) with this participant.
        case newShard(NodeID)

        package var node: NodeID {
            switch self {
            case .home(let n), .shard(let n), .newShard(let n): n
            }
        }
    }

    /// `nodes`: the live node records; `shards`: the room's records as
    /// read (`RoomShards.records`); `placedRecently`: participants of the
    /// room the caller sent to each node lately, which their records may
    /// not show yet (a node counts as serving at least that many);
    /// `region`: the entry node's.
    package static func choose(
        home: RoomHome, nodes: [NodeRecord], shards: [RoomShardRecord], placedRecently: [NodeID: Int] = [:],
        preferringRegion region: String? = nil
    ) -> Decision? {
        var live: [NodeID: NodeRecord] = [:]
        for n in nodes { live[n.id] = n }
        var served: [NodeID: Int] = [:]
        for record in shards where record.epoch == home.epoch {
            served[record.node] = max(served[record.node] ?? 0, record.participants.count)
        }
        for (node, count) in placedRecently where count > 0 { served[node] = max(served[node] ?? 0, count) }
        func hasRoom(_ node: NodeRecord) -> Bool {
            node.acceptsParticipants && (served[node.id] ?? 0) < (node.limits.roomNodeCapacity ?? .max)
        }

        if let record = live[home.node], hasRoom(record) { return .home(home.node) }

        let shard = served.keys.compactMap { id in id == home.node ? nil : live[id] }.filter(hasRoom).min { a, b in
            let (pa, pb) = (served[a.id] ?? 0, served[b.id] ?? 0)
            return pa != pb ? pa < pb : a.id < b.id
        }
        if let shard { return .shard(shard.id) }

        let fresh = nodes.filter { n in
            n.id != home.node && served[n.id] == nil && (n.limits.roomNodeCapacity ?? 1) > 0
        }
        return RoomPlacement.choose(among: fresh, preferringRegion: region).map(Decision.newShard)
    }
}
