/// The Redis keys of one cluster, all under one prefix so several clusters
/// (or test runs) can share a Redis.
///
/// - `<prefix>:node:<id>`: a node's `NodeRecord` (JSON), expiring after
///   `ClusterTiming.recordLifetime`; its presence is the node's liveness.
/// - `<prefix>:nodes`: a sorted set of node ids scored by their last write
///   (ms since the Unix epoch): the index readers walk; an id whose record
///   has expired is removed by whoever reads it (no clock is compared).
/// - `<prefix>:room:<room>`: a hash of the room's home, `node` and `epoch`.
/// - `<prefix>:epoch`: the counter every new placement takes its epoch from
///   (`INCR`), so epochs grow across the cluster and a newer one always
///   means a newer placement.
/// - `<prefix>:shard:<room>:<node id>`: a node's part of a cascaded room
///   (`RoomShardRecord`, JSON), expiring after `recordLifetime` like the
///   node's record and rewritten with it, deleted when the node's last
///   participant of the room leaves. Node ids never hold `:`
///   (`NodeID.isValidName`, and the nonce is hex), so the key names one
///   room and one node whatever the room's name holds.
/// - `<prefix>:shards:<room>`: a set of the node ids holding a part of the
///   room: the index readers walk. Every writer refreshes its expiry to
///   `recordLifetime` with its record, so the set outlives each record in
///   it and goes once the last writer stops; an id whose record has
///   expired is removed by whoever reads it (`RoomShardPrune`).
/// - `<prefix>:room-events`: the pub/sub channel on which a shard publishes
///   a room's name after changing its record: a wake-up only (delivery is
///   not guaranteed; readers also read at every refresh), the truth is in
///   the keys.
package struct ClusterKeys: Equatable, Sendable {
    package let prefix: String

    package init(prefix: String = "swiftlet") { self.prefix = prefix }

    package var nodePrefix: String { "\(prefix):node:" }
    package func node(_ id: NodeID) -> String { nodePrefix + id.rawValue }
    package var nodeIndex: String { "\(prefix):nodes" }
    package func room(_ name: String) -> String { "\(prefix):room:\(name)" }
    package var epochCounter: String { "\(prefix):epoch" }
    package func shard(room: String, node: NodeID) -> String { "\(prefix):shard:\(room):\(node.rawValue)" }
    package func shardIndex(room: String) -> String { "\(prefix):shards:\(room)" }
    package var roomEvents: String { "\(prefix):room-events" }
}
