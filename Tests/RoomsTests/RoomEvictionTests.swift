import RoomProtocol
import Testing
import Wire

@testable import Rooms

/// `RoomDirectory.evict`: a cluster drops this node's stale copy of a room
/// (docs/CLUSTER.md). Everyone in that room goes, no one else.
@Suite struct RoomEvictionTests {
    func join(_ d: inout RoomDirectory<SequentialIdentifiers>, _ identity: String, room: String, on c: UInt64) {
        _ = d.join(
            JoinRequest(identity: identity, room: room, grants: Grants(publish: true, subscribe: true), mode: nil),
            connection: ConnectionID(c), now: Instant(nanoseconds: 1))
    }

    @Test func evictingARoomRemovesItsParticipantsAndReturnsTheirConnections() {
        var d = RoomDirectory(ids: SequentialIdentifiers())
        join(&d, "alice", room: "moved", on: 1)
        join(&d, "bob", room: "moved", on: 2)
        join(&d, "carol", room: "stays", on: 3)
        #expect(d.roomNames == ["moved", "stays"])

        let (effects, connections) = d.evict(room: "moved", reason: "moved")
        #expect(Set(connections) == [ConnectionID(1), ConnectionID(2)])
        #expect(d.roomNames == ["stays"])
        #expect(d.participant(on: ConnectionID(1)) == nil)
        #expect(d.participant(on: ConnectionID(2)) == nil)
        #expect(d.participant(on: ConnectionID(3)) != nil)
        // Nothing is sent to the evicted (their sockets close), nothing to
        // the other room; their media is released.
        #expect(!effects.contains { if case .send = $0 { true } else { false } })
        #expect(effects.contains { if case .media(.releaseParticipant(room: "moved", _)) = $0 { true } else { false } })
        // The same identity can join again (here, or on the room's node).
        join(&d, "alice", room: "moved", on: 4)
        #expect(d.participant(on: ConnectionID(4)) != nil)
    }

    @Test func evictingAnUnknownRoomDoesNothing() {
        var d = RoomDirectory(ids: SequentialIdentifiers())
        join(&d, "alice", room: "here", on: 1)
        let (effects, connections) = d.evict(room: "elsewhere", reason: "moved")
        #expect(effects.isEmpty && connections.isEmpty)
        #expect(d.roomNames == ["here"])
    }
}
