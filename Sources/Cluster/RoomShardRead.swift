/// Reads a room's shards: the index (`SMEMBERS <prefix>:shards:<room>`),
/// then the records it names (`MGET`), as `liveNodes` reads nodes. The
/// index lists candidates; a nil from `MGET` is a part whose node stopped
/// writing (left the room without deleting, or died), and its entry is
/// pruned on the way (`RoomShardPrune`). Key expiry on Redis's clock
/// decides; nothing here compares clocks.
package enum RoomShardRead {
    /// Records per `MGET`: at `RoomShardRecord.Bounds.maxEncodedBytes`
    /// each, one reply stays within the reply reader's 8 MiB of unread
    /// bytes (`RedisReplyReader.Limits`), so a room with many shards is
    /// read in several commands rather than refused.
    package static let recordsPerCommand = 32

    /// `SMEMBERS <prefix>:shards:<room>`.
    package static func index(room: String, keys: ClusterKeys) -> [String] {
        ["SMEMBERS", keys.shardIndex(room: room)]
    }

    /// The node ids the index holds, sorted (a set has no order; every
    /// reader then sees the parts in the same order). An entry that is not
    /// text is left out; an empty index or a missing key is no node.
    package static func nodes(from reply: RedisValue) throws(RoomShardError) -> [NodeID] {
        switch reply {
        case .array(let items):
            return items.compactMap { $0.text.flatMap { $0.isEmpty ? nil : NodeID(rawValue: $0) } }.sorted()
        case .null: return []
        case .error(let why): throw .refused(why)
        default: throw .unexpectedReply("\(reply)")
        }
    }

    /// `MGET` of the records of `nodes`, at most `recordsPerCommand` keys
    /// each, in order.
    package static func records(room: String, nodes: [NodeID], keys: ClusterKeys) -> [[String]] {
        stride(from: 0, to: nodes.count, by: recordsPerCommand).map { start in
            ["MGET"] + nodes[start..<min(start + recordsPerCommand, nodes.count)].map { keys.shard(room: room, node: $0) }
        }
    }

    /// The replies to `records(room:nodes:keys:)`, in order, read as the
    /// room's parts.
    package static func shards(room: String, nodes: [NodeID], replies: [RedisValue]) throws(RoomShardError) -> RoomShards {
        var values: [RedisValue] = []
        values.reserveCapacity(nodes.count)
        for reply in replies {
            switch reply {
            case .array(let items): values += items
            case .error(let why): throw .refused(why)
            default: throw .unexpectedReply("\(reply)")
            }
        }
        guard values.count == nodes.count else {
            throw .unexpectedReply("\(values.count) values for \(nodes.count) shard keys")
        }
        var shards = RoomShards()
        for (node, value) in zip(nodes, values) {
            switch value {
            case .null: shards.expired.append(node)
            case .bulk(let bytes):
                guard let record = RoomShardRecord(decoding: bytes) else {
                    shards.unreadable += 1
                    continue
                }
                guard record.room == room, record.node == node else {
                    shards.misfiled += 1
                    continue
                }
                shards.records.append(record)
            default: shards.unreadable += 1
            }
        }
        return shards
    }
}

/// A room's parts as one read found them.
package struct RoomShards: Equatable, Sendable {
    /// The readable records, in node id order.
    package var records: [RoomShardRecord] = []
    /// Index entries whose record is gone: to prune (`RoomShardPrune`).
    package var expired: [NodeID] = []
    /// Values that are not a record within bounds (damaged, another
    /// version's, too large): skipped, and left in the index (the key
    /// exists; it expires if nobody rewrites it).
    package var unreadable = 0
    /// Records that name another room or node than the key they were read
    /// from: skipped (a record is trusted only under its own key).
    package var misfiled = 0

    package init(records: [RoomShardRecord] = [], expired: [NodeID] = [], unreadable: Int = 0, misfiled: Int = 0) {
        self.records = records
        self.expired = expired
        self.unreadable = unreadable
        self.misfiled = misfiled
    }

    /// The records of the room's placement `epoch`: the parts of the
    /// current copy (epochs are compared for equality, as homes are).
    package func records(atEpoch epoch: Int64) -> [RoomShardRecord] {
        records.filter { $0.epoch == epoch }
    }
}

/// Removes index entries whose record has expired, each only while its
/// record is still missing: a node that wrote again between the read and
/// the prune keeps its entry (a plain `SREM` would drop a live part from
/// the index until that node's next write). A script, so the check and
/// the removal are one step in Redis.
package enum RoomShardPrune {
    package static let script = """
        local removed = 0
        for i = 2, #KEYS do
          if redis.call('EXISTS', KEYS[i]) == 0 then
            removed = removed + redis.call('SREM', KEYS[1], ARGV[i - 1])
          end
        end
        return removed
        """

    /// `EVAL script <1 + n> <shard index> <shard key>... <node id>...`; nil
    /// when there is nothing to prune.
    package static func command(room: String, nodes: [NodeID], keys: ClusterKeys) -> [String]? {
        guard !nodes.isEmpty else { return nil }
        return ["EVAL", script, String(1 + nodes.count), keys.shardIndex(room: room)]
            + nodes.map { keys.shard(room: room, node: $0) } + nodes.map(\.rawValue)
    }

    /// How many entries the script removed.
    package static func removed(from reply: RedisValue) throws(RoomShardError) -> Int {
        switch reply {
        case .integer(let n): return Int(n)
        case .error(let why): throw .refused(why)
        default: throw .unexpectedReply("\(reply)")
        }
    }
}
