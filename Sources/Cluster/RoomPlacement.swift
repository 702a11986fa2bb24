/// Which live node a new room goes to (issue #15), decided by the node that
/// takes the join, then made atomic by `RoomClaim`: the rule only proposes;
/// the script keeps a live home if another node placed the room first.
///
/// The rule: among live nodes that accept rooms (not draining, under their
/// room and participant limits), prefer the entry node's region when one
/// there qualifies; then the lowest load, where load is participants over
/// the node's participant limit (or participants alone when unlimited,
/// scaled to a limit of 1,000), plus its CPU share; ties go to the lowest
/// id, so every node computes the same answer from the same records.
package enum RoomPlacement {
    package static func choose(among nodes: [NodeRecord], preferringRegion region: String? = nil) -> NodeID? {
        let open = nodes.filter(\.acceptsRooms)
        let local = region.map { r in open.filter { $0.region == r } } ?? []
        let pool = local.isEmpty ? open : local
        return pool.min { a, b in
            let (la, lb) = (score(a), score(b))
            return la != lb ? la < lb : a.id < b.id
        }?.id
    }

    static func score(_ node: NodeRecord) -> Double {
        let capacity = Double(node.limits.maxParticipants ?? 1000)
        return Double(node.load.participants) / max(capacity, 1) + node.load.cpu
    }
}

/// A room's home as the claim script returned it.
package struct RoomHome: Equatable, Sendable {
    package var node: NodeID
    /// Grows with every new placement of any room (`ClusterKeys.epochCounter`).
    /// Every message between nodes about the room carries it; a node that
    /// sees a newer epoch drops its stale copy of the room.
    package var epoch: Int64
    /// True when this claim placed the room (a new epoch), false when it
    /// found a live home.
    package var placedNow: Bool

    package init(node: NodeID, epoch: Int64, placedNow: Bool) {
        self.node = node
        self.epoch = epoch
        self.placedNow = placedNow
    }
}

/// Why a claim did not give a home.
package enum RoomClaimError: Error, Equatable, Sendable {
    /// The proposed node's record expired before the script ran.
    case candidateNotLive
    /// Redis answered something else than the script returns.
    case unexpectedReply(String)
}

/// The room placement, in one Lua script so it is atomic in Redis (scripts
/// run alone: no GET-then-SET race that could place one room on two nodes):
/// keep the room's home while that node's record lives, else give the room
/// to the proposed node with a new epoch from `INCR`.
///
/// The script reads node keys it is not handed in KEYS (the home's, named
/// by the room hash): fine on a single Redis or a replicated one, not on
/// Redis Cluster, which this does not support.
package enum RoomClaim {
    package static let script = """
        local home = redis.call('HGET', KEYS[1], 'node')
        if home and redis.call('EXISTS', ARGV[2] .. home) == 1 then
          return {home, tonumber(redis.call('HGET', KEYS[1], 'epoch')), 0}
        end
        if redis.call('EXISTS', ARGV[2] .. ARGV[1]) == 0 then
          return redis.error_reply('SWIFTLET_CANDIDATE_NOT_LIVE')
        end
        local epoch = redis.call('INCR', KEYS[2])
        redis.call('HSET', KEYS[1], 'node', ARGV[1], 'epoch', epoch)
        return {ARGV[1], epoch, 1}
        """

    /// `EVAL script 2 <room key> <epoch key> <candidate> <node key prefix>`.
    package static func command(room: String, candidate: NodeID, keys: ClusterKeys) -> [String] {
        ["EVAL", script, "2", keys.room(room), keys.epochCounter, candidate.rawValue, keys.nodePrefix]
    }

    package static func home(from reply: RedisValue) throws(RoomClaimError) -> RoomHome {
        if case .error(let text) = reply {
            if text.contains("SWIFTLET_CANDIDATE_NOT_LIVE") { throw .candidateNotLive }
            throw .unexpectedReply(text)
        }
        guard let items = reply.elements, items.count == 3, let node = items[0].text, !node.isEmpty,
            let epoch = items[1].integerValue, let placed = items[2].integerValue
        else { throw .unexpectedReply("\(reply)") }
        return RoomHome(node: NodeID(rawValue: node), epoch: epoch, placedNow: placed == 1)
    }
}
