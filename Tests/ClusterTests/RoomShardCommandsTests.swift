import Cluster
import Testing

/// The commands that write, delete and read a room's shards, and what their
/// replies mean (the round trip on a real Redis is in ClusterServiceTests).
@Suite struct RoomShardCommandsTests {
    let keys = ClusterKeys(prefix: "t")
    let a = NodeID(rawValue: "a~01")
    let b = NodeID(rawValue: "b~02")
    let c = NodeID(rawValue: "c~03")

    func bulk(_ s: String) -> RedisValue { .bulk(Array(s.utf8)) }

    @Test func keysNameTheRoomAndTheNode() {
        #expect(keys.shard(room: "demo", node: a) == "t:shard:demo:a~01")
        #expect(keys.shardIndex(room: "demo") == "t:shards:demo")
        #expect(keys.roomEvents == "t:room-events")
        // A room name with colons stays unambiguous: node ids hold none.
        #expect(keys.shard(room: "x:y", node: a) == "t:shard:x:y:a~01")
    }

    @Test func aWriteIsOneScriptWithTheRecordTheIndexAndTheLifetime() throws {
        let record = RoomShardRecord(room: "demo", node: a, epoch: 3)
        let command = try #require(RoomShardWrite.command(record, keys: keys, timing: ClusterTiming()))
        #expect(command[0] == "EVAL" && command[1] == RoomShardWrite.script && command[2] == "2")
        #expect(Array(command[3...4]) == ["t:shard:demo:a~01", "t:shards:demo"])
        #expect(RoomShardRecord(decoding: Array(command[5].utf8)) == record)
        #expect(Array(command[6...]) == ["a~01", "6000"])
        let tooLarge = RoomShardRecord(
            room: "demo", node: a, epoch: 3,
            wants: Array(repeating: WantedTrack(trackID: "t", node: b), count: RoomShardRecord.Bounds.maxWants + 1))
        #expect(RoomShardWrite.command(tooLarge, keys: keys, timing: ClusterTiming()) == nil)

        try RoomShardWrite.check(.integer(1))
        #expect(throws: RoomShardError.refused("OOM")) { try RoomShardWrite.check(.error("OOM")) }
        #expect(throws: RoomShardError.self) { try RoomShardWrite.check(.status("OK")) }
    }

    @Test func deleteWakeUpAndSubscribe() {
        #expect(
            RoomShardWrite.delete(room: "demo", node: a, keys: keys) == [
                ["DEL", "t:shard:demo:a~01"], ["SREM", "t:shards:demo", "a~01"],
            ])
        #expect(RoomShardWrite.wakeUp(room: "demo", keys: keys) == ["PUBLISH", "t:room-events", "demo"])
        #expect(RoomEvents.subscribe(keys: keys) == ["SUBSCRIBE", "t:room-events"])
        #expect(RoomEvents.room(from: .array([bulk("message"), bulk("t:room-events"), bulk("demo")]), keys: keys) == "demo")
        #expect(RoomEvents.room(from: .array([bulk("subscribe"), bulk("t:room-events"), .integer(1)]), keys: keys) == nil)
        #expect(RoomEvents.room(from: .array([bulk("message"), bulk("other"), bulk("demo")]), keys: keys) == nil)
        #expect(RoomEvents.room(from: .array([bulk("message"), bulk("t:room-events"), bulk("")]), keys: keys) == nil)
    }

    @Test func theIndexIsReadSortedAndTheRecordsInBatches() throws {
        #expect(RoomShardRead.index(room: "demo", keys: keys) == ["SMEMBERS", "t:shards:demo"])
        #expect(try RoomShardRead.nodes(from: .array([bulk("c~03"), bulk("a~01"), .integer(5), bulk("")])) == [a, c])
        #expect(try RoomShardRead.nodes(from: .array([])) == [])
        #expect(throws: RoomShardError.refused("WRONGTYPE x")) { try RoomShardRead.nodes(from: .error("WRONGTYPE x")) }

        #expect(RoomShardRead.records(room: "demo", nodes: [], keys: keys) == [])
        #expect(
            RoomShardRead.records(room: "demo", nodes: [a, b], keys: keys) == [
                ["MGET", "t:shard:demo:a~01", "t:shard:demo:b~02"]
            ])
        let many = (0..<70).map { NodeID(rawValue: "n\($0)") }
        let batches = RoomShardRead.records(room: "demo", nodes: many, keys: keys)
        #expect(batches.map(\.count) == [33, 33, 7])
        #expect(batches.flatMap { $0.dropFirst() } == many.map { keys.shard(room: "demo", node: $0) })
    }

    @Test func repliesBecomeRecordsAndTheRestIsCounted() throws {
        let mine = RoomShardRecord(room: "demo", node: a, epoch: 3)
        let otherRoom = RoomShardRecord(room: "elsewhere", node: b, epoch: 3)
        let otherNode = RoomShardRecord(room: "demo", node: a, epoch: 3)  // read under c's key
        let d = NodeID(rawValue: "d~04")
        let e = NodeID(rawValue: "e~05")
        let replies: [RedisValue] = [
            .array([.bulk(mine.encoded()!), .bulk(otherRoom.encoded()!), .null]),
            .array([.bulk(otherNode.encoded()!), bulk("{damaged"), .integer(1)]),
        ]
        let f = NodeID(rawValue: "f~06")
        let shards = try RoomShardRead.shards(room: "demo", nodes: [a, b, e, c, d, f], replies: replies)
        #expect(shards == RoomShards(records: [mine], expired: [e], unreadable: 2, misfiled: 2))
        #expect(shards.records(atEpoch: 3) == [mine] && shards.records(atEpoch: 4).isEmpty)

        #expect(throws: RoomShardError.self) { try RoomShardRead.shards(room: "demo", nodes: [a], replies: [.array([])]) }
        #expect(throws: RoomShardError.refused("LOADING")) {
            try RoomShardRead.shards(room: "demo", nodes: [a], replies: [.error("LOADING")])
        }
        #expect(try RoomShardRead.shards(room: "demo", nodes: [], replies: []) == RoomShards())
    }

    @Test func pruningChecksEachRecordIsStillMissing() throws {
        #expect(RoomShardPrune.command(room: "demo", nodes: [], keys: keys) == nil)
        let command = try #require(RoomShardPrune.command(room: "demo", nodes: [a, b], keys: keys))
        #expect(command[0] == "EVAL" && command[1] == RoomShardPrune.script)
        #expect(
            Array(command[2...]) == ["3", "t:shards:demo", "t:shard:demo:a~01", "t:shard:demo:b~02", "a~01", "b~02"])
        #expect(try RoomShardPrune.removed(from: .integer(2)) == 2)
        #expect(throws: RoomShardError.refused("NOSCRIPT")) { try RoomShardPrune.removed(from: .error("NOSCRIPT")) }
    }
}
