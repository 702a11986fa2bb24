import Cluster

/// A cascaded room's parts in Redis (`RoomShardRecord`; the commands and
/// the reading of their replies are `Cluster`'s `RoomShardWrite`,
/// `RoomShardRead` and `RoomShardPrune`).
extension ClusterRegistry {
    /// Writes this node's part of a room with a fresh expiry, and its entry
    /// in the room's index; `wakeUp` also publishes the room on the
    /// room-events channel (after a change, not at the periodic rewrite).
    /// False when the record breaks `RoomShardRecord.Bounds`: nothing was
    /// written, the previous record (if any) stands until it expires.
    package func writeShard(_ record: RoomShardRecord, wakeUp: Bool) throws(ClusterError) -> Bool {
        guard let write = RoomShardWrite.command(record, keys: keys, timing: timing) else { return false }
        let replies = try run(wakeUp ? [write, RoomShardWrite.wakeUp(room: record.room, keys: keys)] : [write])
        do { try RoomShardWrite.check(replies[0]) } catch { throw Self.clusterError(error) }
        if wakeUp, case .error(let why) = replies[1] { throw .refused(why) }
        return true
    }

    /// Removes this node's part of a room at once (its last participant
    /// there left): the others stop seeing it without waiting for expiry.
    package func deleteShard(room: String, node: NodeID) throws(ClusterError) {
        for reply in try run(RoomShardWrite.delete(room: room, node: node, keys: keys)) {
            if case .error(let why) = reply { throw .refused(why) }
        }
    }

    /// The room's parts whose records live, in node id order, with what was
    /// skipped counted; the index entries of expired parts are pruned on
    /// the way (each only while its record is still missing).
    package func readShards(room: String) throws(ClusterError) -> RoomShards {
        let index = try run([RoomShardRead.index(room: room, keys: keys)])[0]
        let nodes = try Self.reading { () throws(RoomShardError) in try RoomShardRead.nodes(from: index) }
        guard !nodes.isEmpty else { return RoomShards() }
        let replies = try run(RoomShardRead.records(room: room, nodes: nodes, keys: keys))
        let shards = try Self.reading { () throws(RoomShardError) in
            try RoomShardRead.shards(room: room, nodes: nodes, replies: replies)
        }
        if let prune = RoomShardPrune.command(room: room, nodes: shards.expired, keys: keys) {
            let reply = try run([prune])[0]
            _ = try Self.reading { () throws(RoomShardError) in try RoomShardPrune.removed(from: reply) }
        }
        return shards
    }

    /// A reply read by `Cluster`, its error as this target's.
    private static func reading<T>(_ read: () throws(RoomShardError) -> T) throws(ClusterError) -> T {
        do { return try read() } catch { throw clusterError(error) }
    }

    private static func clusterError(_ error: RoomShardError) -> ClusterError {
        switch error {
        case .refused(let why), .unexpectedReply(let why): .refused(why)
        }
    }
}
