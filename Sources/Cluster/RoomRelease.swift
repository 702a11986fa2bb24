/// Why a release did not answer as the script does.
package enum RoomReleaseError: Error, Equatable, Sendable {
    /// Redis answered something else than the script returns.
    case unexpectedReply(String)
}

/// Gives a room's home back when the room ended on its node: one Lua script
/// deletes the room's hash only while its `node` and `epoch` are still the
/// releaser's. Atomic in Redis (scripts run alone), so a release never
/// deletes a home another node took over in between, as a GET-then-DEL
/// could: once the hash names another node or a newer epoch, the release
/// leaves it and answers 0.
package enum RoomRelease {
    package static let script = """
        local home = redis.call('HMGET', KEYS[1], 'node', 'epoch')
        if home[1] == ARGV[1] and home[2] == ARGV[2] then
          return redis.call('DEL', KEYS[1])
        end
        return 0
        """

    /// `EVAL script 1 <room key> <node> <epoch>`. The epoch is compared as
    /// the text `RoomClaim` stored (`HSET` of an `INCR` result: decimal
    /// digits), so it is sent as decimal digits too.
    package static func command(room: String, node: NodeID, epoch: Int64, keys: ClusterKeys) -> [String] {
        ["EVAL", script, "1", keys.room(room), node.rawValue, String(epoch)]
    }

    /// True when the home was still ours and is deleted now; false when it
    /// was gone already or another node or a newer placement holds it.
    package static func released(from reply: RedisValue) throws(RoomReleaseError) -> Bool {
        switch reply {
        case .integer(1): true
        case .integer(0): false
        default: throw .unexpectedReply("\(reply)")
        }
    }
}
