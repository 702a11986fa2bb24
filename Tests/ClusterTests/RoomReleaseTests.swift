import Cluster
import Testing

/// The release script's command and replies, and the read of a room's home
/// (the script itself runs against a real Redis in ClusterServiceTests).
@Suite struct RoomReleaseTests {
    @Test func theCommandNamesTheRoomKeyOurNodeAndOurEpochAsDigits() {
        let command = RoomRelease.command(
            room: "standup", node: NodeID(rawValue: "sfu-1~00000000000000ab"), epoch: 42, keys: ClusterKeys(prefix: "t"))
        #expect(command == ["EVAL", RoomRelease.script, "1", "t:room:standup", "sfu-1~00000000000000ab", "42"])
    }

    @Test func repliesSayWhetherTheHomeWasDeleted() throws {
        #expect(try RoomRelease.released(from: .integer(1)))
        #expect(try !RoomRelease.released(from: .integer(0)))
        #expect(throws: RoomReleaseError.self) { try RoomRelease.released(from: .integer(2)) }
        #expect(throws: RoomReleaseError.self) { try RoomRelease.released(from: .error("NOSCRIPT")) }
        #expect(throws: RoomReleaseError.self) { try RoomRelease.released(from: .null) }
    }

    @Test func aStoredHomeIsReadFromHMGET() throws {
        #expect(StoredRoomHome.command(room: "r", keys: ClusterKeys()) == ["HMGET", "swiftlet:room:r", "node", "epoch"])
        #expect(try StoredRoomHome(reply: .array([.null, .null])) == .missing)
        #expect(
            try StoredRoomHome(reply: .array([.bulk(Array("n1".utf8)), .bulk(Array("17".utf8))]))
                == .home(node: NodeID(rawValue: "n1"), epoch: 17))
    }

    @Test func aHomeThisCodeDidNotWriteIsUnreadableAndRedisFailingIsThrown() throws {
        let n1 = RedisValue.bulk(Array("n1".utf8))
        for reply: RedisValue in [
            .array([n1, .null]), .array([.null, .bulk(Array("3".utf8))]), .array([n1, .bulk(Array("3x".utf8))]),
            .array([.bulk([]), .bulk(Array("3".utf8))]), .array([n1, .integer(3)]),
            .error("WRONGTYPE Operation against a key holding the wrong kind of value"),
        ] {
            #expect(try StoredRoomHome(reply: reply) == .unreadable, "\(reply)")
        }
        #expect(throws: StoredRoomHomeError.refused("LOADING Redis is loading the dataset in memory")) {
            try StoredRoomHome(reply: .error("LOADING Redis is loading the dataset in memory"))
        }
        #expect(throws: StoredRoomHomeError.self) { try StoredRoomHome(reply: .array([n1])) }
        #expect(throws: StoredRoomHomeError.self) { try StoredRoomHome(reply: .null) }
    }
}
