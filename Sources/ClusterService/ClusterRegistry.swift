import Cluster

/// Why a cluster operation failed.
package enum ClusterError: Error, Equatable, Sendable, CustomStringConvertible {
    case redis(RedisConnectionError)
    case claim(RoomClaimError)
    /// No live node accepts rooms (all draining or full).
    case noNodeAvailable
    /// Every node that could serve the room holds its capacity of it.
    case roomFull(String)
    /// Redis answered with an error.
    case refused(String)

    package var description: String {
        switch self {
        case .redis(let e): e.description
        case .claim(let e): "room claim failed: \(e)"
        case .noNodeAvailable: "no node accepts rooms"
        case .roomFull(let room): "room '\(room)' is full: no node can take another of its participants"
        case .refused(let why): "redis refused: \(why)"
        }
    }
}

/// The cluster's shared state in Redis, read and written over one
/// connection (`ClusterKeys` says which keys). Not thread-safe: one owner.
package final class ClusterRegistry {
    package let connection: RedisConnection
    package let keys: ClusterKeys
    package let timing: ClusterTiming
    /// Milliseconds since the Unix epoch: the index's scores, each node's
    /// last write (informational; liveness never compares them).
    private let wallClockMilliseconds: () -> Int64

    package init(
        connection: RedisConnection, keys: ClusterKeys, timing: ClusterTiming, wallClockMilliseconds: @escaping () -> Int64
    ) {
        self.connection = connection
        self.keys = keys
        self.timing = timing
        self.wallClockMilliseconds = wallClockMilliseconds
    }

    /// Writes (or rewrites) `record` with a fresh expiry, and its index
    /// entry. One pipeline: the record is the truth, the index a hint.
    package func register(_ record: NodeRecord) throws(ClusterError) {
        let lifetime = timing.recordLifetimeMilliseconds
        let json = String(decoding: record.encoded(), as: UTF8.self)
        let replies = try run([
            ["SET", keys.node(record.id), json, "PX", String(lifetime)],
            ["ZADD", keys.nodeIndex, String(wallClockMilliseconds()), record.id.rawValue],
        ])
        for r in replies { if case .error(let why) = r { throw .refused(why) } }
    }

    /// Removes our record at once (a clean shutdown): the others see the
    /// node gone without waiting for the expiry.
    package func deregister(_ id: NodeID) throws(ClusterError) {
        _ = try run([["DEL", keys.node(id)], ["ZREM", keys.nodeIndex, id.rawValue]])
    }

    /// The nodes whose record lives now, by id. The index lists candidates;
    /// a nil from `MGET` is an expired record, a dead node whatever the
    /// index says, and its index entry is removed on the way. Nothing here
    /// compares clocks: Redis expires the keys on its own clock, so nodes
    /// whose clocks disagree still agree on who is alive.
    package func liveNodes() throws(ClusterError) -> [NodeRecord] {
        let ids = (try run([["ZRANGE", keys.nodeIndex, "0", "-1"]])[0].elements ?? []).compactMap(\.text)
        guard !ids.isEmpty else { return [] }
        let records = try run([["MGET"] + ids.map { keys.node(NodeID(rawValue: $0)) }])[0].elements ?? []
        var live: [NodeRecord] = []
        var dead: [String] = []
        for (id, value) in zip(ids, records) {
            if case .bulk(let bytes) = value, let record = NodeRecord(decoding: bytes) {
                live.append(record)
            } else if value == .null {
                dead.append(id)
            }
        }
        if !dead.isEmpty { _ = try run([["ZREM", keys.nodeIndex] + dead]) }
        return live.sorted { $0.id < $1.id }
    }

    /// One node's record, if it lives (nil: expired, or not a record).
    package func record(of id: NodeID) throws(ClusterError) -> NodeRecord? {
        guard case .bulk(let bytes) = try run([["GET", keys.node(id)]])[0] else { return nil }
        return NodeRecord(decoding: bytes)
    }

    /// The room's home: the live one if it has one, else `candidate` with a
    /// new epoch (`RoomClaim`, atomic in Redis).
    package func claimRoom(_ room: String, candidate: NodeID) throws(ClusterError) -> RoomHome {
        let reply = try run([RoomClaim.command(room: room, candidate: candidate, keys: keys)])[0]
        do { return try RoomClaim.home(from: reply) } catch { throw .claim(error) }
    }

    /// Places `room`: proposes the least-loaded live node (`RoomPlacement`)
    /// and claims. A proposal whose record expired in between is proposed
    /// again once from a fresh read.
    package func placeRoom(_ room: String, preferringRegion region: String? = nil) throws(ClusterError) -> RoomHome {
        for attempt in 0..<2 {
            guard let candidate = RoomPlacement.choose(among: try liveNodes(), preferringRegion: region) else {
                throw .noNodeAvailable
            }
            do { return try claimRoom(room, candidate: candidate) } catch .claim(.candidateNotLive) where attempt == 0 {
                continue
            }
        }
        throw .noNodeAvailable
    }

    func run(_ commands: [[String]]) throws(ClusterError) -> [RedisValue] {
        do { return try connection.pipeline(commands) } catch { throw .redis(error) }
    }
}
