import Cluster
import Testing

/// Which node serves a new participant of a room that has a home: the home
/// up to its capacity, then the emptiest shard, then a new one.
@Suite struct ShardPlacementTests {
    func id(_ name: String) -> NodeID { NodeID(rawValue: name) }

    func node(
        _ name: String, capacity: Int? = nil, participants: Int = 0, rooms: Int = 0, region: String? = nil,
        limits: NodeLimits? = nil, draining: Bool = false
    ) -> NodeRecord {
        NodeRecord(
            id: id(name), httpAddress: "http://\(name):8080", relayAddress: "\(name):3478", region: region,
            limits: limits ?? NodeLimits(roomNodeCapacity: capacity),
            load: NodeLoad(rooms: rooms, participants: participants), draining: draining)
    }

    func shard(_ name: String, _ participants: Int, epoch: Int64 = 7) -> RoomShardRecord {
        RoomShardRecord(
            room: "demo", node: id(name), epoch: epoch,
            participants: (0..<participants).map { ShardParticipant(id: "\(name)-\($0)", identity: "") })
    }

    let home = RoomHome(node: NodeID(rawValue: "h"), epoch: 7, placedNow: false)

    func choose(_ nodes: [NodeRecord], _ shards: [RoomShardRecord], region: String? = nil) -> ShardPlacement.Decision? {
        ShardPlacement.choose(home: home, nodes: nodes, shards: shards, preferringRegion: region)
    }

    @Test func theHomeTakesParticipantsUpToItsCapacity() {
        let nodes = [node("h", capacity: 3), node("a", capacity: 3)]
        #expect(choose(nodes, []) == .home(id("h")))  // no record yet: none served
        #expect(choose(nodes, [shard("h", 2)]) == .home(id("h")))
        #expect(choose(nodes, [shard("h", 3)]) == .newShard(id("a")))
        // Unlimited: the room never spreads.
        #expect(choose([node("h"), node("a")], [shard("h", 10_000)]) == .home(id("h")))
    }

    @Test func thenTheShardWithTheFewestParticipantsLowestIdOnATie() {
        let nodes = [node("h", capacity: 2), node("a", capacity: 5), node("b", capacity: 5), node("c", capacity: 5)]
        #expect(choose(nodes, [shard("h", 2), shard("a", 4), shard("b", 1)]) == .shard(id("b")))
        #expect(choose(nodes, [shard("h", 2), shard("b", 3), shard("a", 3)]) == .shard(id("a")))
        // A full shard is passed over; all full: a node without a part.
        #expect(choose(nodes, [shard("h", 2), shard("a", 5), shard("b", 4)]) == .shard(id("b")))
        #expect(choose(nodes, [shard("h", 2), shard("a", 5), shard("b", 5)]) == .newShard(id("c")))
    }

    @Test func shardsThatAreDeadDrainingOrFullOfParticipantsAreSkipped() {
        let nodes = [
            node("h", capacity: 1), node("a", capacity: 5, draining: true),
            node("b", capacity: 5, participants: 9, limits: NodeLimits(maxParticipants: 9, roomNodeCapacity: 5)),
            // At its room limit: it still takes participants of a room it serves.
            node("c", capacity: 5, rooms: 4, limits: NodeLimits(maxRooms: 4, roomNodeCapacity: 5)),
        ]
        let shards = [shard("h", 1), shard("a", 0), shard("b", 0), shard("c", 3), shard("dead", 0)]
        #expect(choose(nodes, shards) == .shard(id("c")))
        #expect(choose(nodes, Array(shards.dropLast(2))) == nil)
    }

    @Test func aNewShardIsTheLeastLoadedNodeThatAcceptsRoomsEntryRegionFirst() {
        let nodes = [
            node("h", capacity: 1, region: "eu"), node("a", participants: 50, region: "eu"),
            node("b", participants: 10, region: "us"), node("c", participants: 0, region: "eu", draining: true),
            node("d", rooms: 1, limits: NodeLimits(maxRooms: 1)),
        ]
        #expect(choose(nodes, [shard("h", 1)]) == .newShard(id("b")))
        #expect(choose(nodes, [shard("h", 1)], region: "eu") == .newShard(id("a")))
        // A node with a part is not new, even a full one.
        #expect(choose(nodes, [shard("h", 1), shard("b", 0)], region: "us") == .shard(id("b")))
        #expect(choose([node("h", capacity: 1), node("a", capacity: 0)], [shard("h", 1)]) == nil)
    }

    @Test func recordsOfAnotherEpochCountForNothing() {
        let nodes = [node("h", capacity: 2), node("a", capacity: 2), node("b", capacity: 2)]
        // The home's stale record does not fill it.
        #expect(choose(nodes, [shard("h", 2, epoch: 6)]) == .home(id("h")))
        // A node with only a stale part is a new shard, not a shard.
        #expect(choose(nodes, [shard("h", 2), shard("b", 0, epoch: 6)]) == .newShard(id("a")))
    }

    @Test func aHomeMissingFromTheRecordsIsPassedOver() {
        #expect(choose([node("a")], []) == .newShard(id("a")))
        #expect(choose([node("a")], [shard("h", 0)]) == .newShard(id("a")))
        #expect(choose([], []) == nil)
        #expect(ShardPlacement.Decision.newShard(id("a")).node == id("a"))
    }
}
