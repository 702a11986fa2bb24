import Testing

@testable import ClusterService

/// The rooms the wake-up channel names between two cascade steps are
/// bounded: whoever can publish on the channel cannot grow the set.
@Suite struct ClusterAgentWakeUpTests {
    @Test func roomsAreRememberedOnceAndPastTheBoundEveryRoomIsRead() {
        var woken: (all: Bool, rooms: Set<String>) = (false, [])
        ClusterAgent.noteWakeUp(&woken, room: "a")
        ClusterAgent.noteWakeUp(&woken, room: "a")
        #expect(!woken.all && woken.rooms == ["a"])
        for i in 1..<ClusterAgent.maxWokenRooms { ClusterAgent.noteWakeUp(&woken, room: "r\(i)") }
        #expect(!woken.all && woken.rooms.count == ClusterAgent.maxWokenRooms)
        // A room already named costs nothing; one more switches to "every
        // room" and forgets the names.
        ClusterAgent.noteWakeUp(&woken, room: "a")
        #expect(!woken.all)
        ClusterAgent.noteWakeUp(&woken, room: "one-too-many")
        #expect(woken.all && woken.rooms.isEmpty)
        for i in 0..<10_000 { ClusterAgent.noteWakeUp(&woken, room: "flood-\(i)") }
        #expect(woken.all && woken.rooms.isEmpty)
    }

    @Test func aResubscriptionMeansEveryRoom() {
        var woken: (all: Bool, rooms: Set<String>) = (false, ["a"])
        ClusterAgent.noteWakeUp(&woken, room: nil)
        #expect(woken.all)
    }
}
