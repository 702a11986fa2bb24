import Cluster
import Testing

/// Which node a new room goes to, and what the claim script's replies mean.
@Suite struct RoomPlacementTests {
    func node(
        _ name: String, participants: Int = 0, rooms: Int = 0, cpu: Double = 0, region: String? = nil,
        limits: NodeLimits = NodeLimits(), draining: Bool = false
    ) -> NodeRecord {
        NodeRecord(
            id: NodeID(rawValue: name), httpAddress: "https://\(name):8443", relayAddress: "\(name):3478", region: region,
            limits: limits, load: NodeLoad(rooms: rooms, participants: participants, cpu: cpu), draining: draining)
    }

    @Test func theLeastLoadedNodeThatAcceptsRoomsLowestIdOnATie() {
        #expect(RoomPlacement.choose(among: []) == nil)
        #expect(RoomPlacement.choose(among: [node("b"), node("a")]) == NodeID(rawValue: "a"))
        #expect(RoomPlacement.choose(among: [node("a", participants: 20), node("b", participants: 5)]) == NodeID(rawValue: "b"))
        // Load is relative to the node's own limit.
        let big = node("a", participants: 20, limits: NodeLimits(maxParticipants: 1000))
        let small = node("b", participants: 10, limits: NodeLimits(maxParticipants: 50))
        #expect(RoomPlacement.choose(among: [big, small]) == NodeID(rawValue: "a"))
        // CPU counts too.
        #expect(RoomPlacement.choose(among: [node("a", cpu: 0.9), node("b", participants: 100)]) == NodeID(rawValue: "b"))
    }

    @Test func drainingAndFullNodesTakeNoRoom() {
        let nodes = [
            node("a", draining: true), node("b", rooms: 3, limits: NodeLimits(maxRooms: 3)),
            node("c", participants: 9, limits: NodeLimits(maxParticipants: 9)), node("d", participants: 500),
        ]
        #expect(RoomPlacement.choose(among: nodes) == NodeID(rawValue: "d"))
        #expect(RoomPlacement.choose(among: Array(nodes.prefix(3))) == nil)
    }

    @Test func theEntryNodesRegionFirstWhenANodeThereAcceptsRooms() {
        let nodes = [node("a", region: "eu"), node("b", participants: 50, region: "us"), node("c", region: nil)]
        #expect(RoomPlacement.choose(among: nodes, preferringRegion: "us") == NodeID(rawValue: "b"))
        #expect(RoomPlacement.choose(among: nodes, preferringRegion: "ap") == NodeID(rawValue: "a"))
    }

    @Test func recordsRoundTripAndGarbageIsAbsent() throws {
        let record = node("n1", participants: 3, region: "eu", limits: NodeLimits(maxRooms: 10, roomNodeCapacity: 100))
        #expect(NodeRecord(decoding: record.encoded()) == record)
        #expect(NodeRecord(decoding: Array("{\"id\":1}".utf8)) == nil)
        #expect(NodeRecord(decoding: [UInt8](repeating: 0x20, count: NodeRecord.maxEncodedSize + 1)) == nil)
    }

    @Test func nodeIDsCarryABootNonce() {
        let a = NodeID(name: "sfu-1", nonce: 0xABC)
        #expect(a.rawValue == "sfu-1~0000000000000abc")
        #expect(a != NodeID(name: "sfu-1", nonce: 0xABD))
        #expect(NodeID.isValidName("sfu-1.eu_west"))
        #expect(!NodeID.isValidName("a:b") && !NodeID.isValidName("") && !NodeID.isValidName("a b"))
        // A node id from untrusted text (a session id's `@node`).
        let id = NodeID(name: "sfu-1", nonce: 0xAB)
        #expect(NodeID(validating: id.rawValue) == id)
        for bad in [
            "", "sfu-1", "sfu-1~", "sfu-1~00000000000000AB", "sfu 1~00000000000000ab", "~00000000000000ab",
            "a~00000000000000ab0", String(repeating: "a", count: 65) + "~00000000000000ab", "swiftlet:x~00000000000000ab",
        ] {
            #expect(NodeID(validating: bad) == nil, "\(bad)")
        }
    }

    @Test func claimReplies() throws {
        let placed = try RoomClaim.home(from: .array([.bulk(Array("n1".utf8)), .integer(7), .integer(1)]))
        #expect(placed == RoomHome(node: NodeID(rawValue: "n1"), epoch: 7, placedNow: true))
        let kept = try RoomClaim.home(from: .array([.bulk(Array("n2".utf8)), .integer(3), .integer(0)]))
        #expect(!kept.placedNow)
        #expect(throws: RoomClaimError.candidateNotLive) {
            try RoomClaim.home(from: .error("ERR user_script:6: SWIFTLET_CANDIDATE_NOT_LIVE"))
        }
        #expect(throws: RoomClaimError.self) { try RoomClaim.home(from: .integer(1)) }
        let keys = ClusterKeys(prefix: "t")
        #expect(
            RoomClaim.command(room: "r", candidate: NodeID(rawValue: "n"), keys: keys).suffix(5) == [
                "2", "t:room:r", "t:epoch", "n", "t:node:",
            ])
    }
}
