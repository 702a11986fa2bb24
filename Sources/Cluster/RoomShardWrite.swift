/// Why a shard write, delete or read did not answer as Redis does when it
/// worked.
package enum RoomShardError: Error, Equatable, Sendable {
    /// Redis answered with an error (out of memory, loading, a key of
    /// another type).
    case refused(String)
    /// Not the reply the command gives.
    case unexpectedReply(String)
}

/// Writes a node's part of a room (`RoomShardRecord`): the record with its
/// expiry, the node's id in the room's shard index, and the index's expiry
/// pushed out to the record's lifetime.
///
/// One Lua script rather than `MULTI`/`EXEC`: the three writes land
/// together either way (a script runs alone), but the script is one
/// command with one reply, where a transaction is five commands whose
/// errors come back as `QUEUED`s and an `EXEC` array to pick apart, and it
/// names its keys in `KEYS` as `RoomClaim` and `RoomRelease` do. Together
/// matters: a record without its index entry is invisible to readers until
/// the next write, an index entry without its record is pruned by the
/// first reader.
///
/// A node writes its record at every refresh (2 s) while it serves part
/// of the room, and after every change of its participants, tracks or
/// wants it also publishes `wakeUp` so the other shards read at once
/// instead of at their next refresh. The periodic rewrite publishes
/// nothing: nothing changed, and every shard reads at its refresh anyway.
package enum RoomShardWrite {
    package static let script = """
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
        redis.call('SADD', KEYS[2], ARGV[2])
        redis.call('PEXPIRE', KEYS[2], ARGV[3])
        return 1
        """

    /// `EVAL script 2 <shard key> <shard index> <record JSON> <node id>
    /// <lifetime ms>`; nil when the record breaks `RoomShardRecord.Bounds`
    /// (`encoded()`): nothing readers would refuse is written.
    package static func command(_ record: RoomShardRecord, keys: ClusterKeys, timing: ClusterTiming) -> [String]? {
        guard let bytes = record.encoded() else { return nil }
        return [
            "EVAL", script, "2", keys.shard(room: record.room, node: record.node), keys.shardIndex(room: record.room),
            String(decoding: bytes, as: UTF8.self), record.node.rawValue, String(timing.recordLifetimeMilliseconds),
        ]
    }

    /// Redis's answer to `command`: the script answers 1.
    package static func check(_ reply: RedisValue) throws(RoomShardError) {
        switch reply {
        case .integer(1): return
        case .error(let why): throw .refused(why)
        default: throw .unexpectedReply("\(reply)")
        }
    }

    /// `PUBLISH <prefix>:room-events <room>`: a wake-up for the room's
    /// other shards after a change. Only a hint (a subscriber that is
    /// reconnecting misses it); the record is the truth.
    package static func wakeUp(room: String, keys: ClusterKeys) -> [String] {
        ["PUBLISH", keys.roomEvents, room]
    }

    /// What a node sends when its last participant of the room left: the
    /// record, then its index entry. Two commands, not a script: a reader
    /// that runs between them finds the entry without a record and prunes
    /// it, the same end.
    package static func delete(room: String, node: NodeID, keys: ClusterKeys) -> [[String]] {
        [["DEL", keys.shard(room: room, node: node)], ["SREM", keys.shardIndex(room: room), node.rawValue]]
    }
}

/// The room-events channel as a subscriber reads it.
package enum RoomEvents {
    /// `SUBSCRIBE <prefix>:room-events`, on a connection of its own (a
    /// subscribed connection takes no other command).
    package static func subscribe(keys: ClusterKeys) -> [String] { ["SUBSCRIBE", keys.roomEvents] }

    /// The room a pushed `message` names, or nil for anything else on a
    /// subscribed connection (the `subscribe` confirmation, another
    /// channel's message).
    package static func room(from push: RedisValue, keys: ClusterKeys) -> String? {
        guard let items = push.elements, items.count == 3, items[0].text == "message", items[1].text == keys.roomEvents,
            let room = items[2].text, !room.isEmpty, RoomShardRecord.Bounds.fits(room)
        else { return nil }
        return room
    }
}
