import RoomProtocol
import Testing
import Wire

@testable import Rooms

/// The server API's operations and the webhook events, on the sans-IO
/// directory with a virtual clock.
@Suite struct RoomAdminTests {
    let grants = Grants(publish: true, subscribe: true)
    let t0 = Instant(nanoseconds: 1_000_000_000)

    private func join(
        _ d: inout RoomDirectory<SequentialIdentifiers>, _ identity: String, room: String, on c: UInt64
    ) -> [RoomEffect] {
        d.join(JoinRequest(identity: identity, room: room, grants: grants), connection: ConnectionID(c), now: t0)
    }

    @Test func anEmptyRoomWaitsItsTimeoutThenCloses() throws {
        var d = RoomDirectory(ids: SequentialIdentifiers())
        _ = try d.createRoom("r", options: RoomOptions(emptyTimeout: .seconds(10)), now: t0).get()
        #expect(d.takeEvents() == [.roomStarted(room: "r")])
        d.closeEmptyRooms(now: t0 + .seconds(9))
        #expect(d.roomSummary("r") != nil)
        // Someone comes and goes at 9 s: the wait starts again when it empties.
        _ = join(&d, "a", room: "r", on: 1)
        _ = d.handle(.leave, from: ConnectionID(1), now: t0 + .seconds(9))
        d.closeEmptyRooms(now: t0 + .seconds(11))  // stamps 11 + 10
        d.closeEmptyRooms(now: t0 + .seconds(20))
        #expect(d.roomSummary("r") != nil)
        d.closeEmptyRooms(now: t0 + .seconds(21))
        #expect(d.roomSummary("r") == nil)
        let kinds = d.takeEvents().map { "\($0)".prefix { $0 != "(" } }
        #expect(kinds == ["participantJoined", "participantLeft", "roomFinished"])
    }

    @Test func aJoinedRoomClosesWithItsLastMemberAsBefore() {
        var d = RoomDirectory(ids: SequentialIdentifiers())
        _ = join(&d, "a", room: "r", on: 1)
        _ = d.handle(.leave, from: ConnectionID(1), now: t0)
        #expect(d.roomSummary("r") == nil && d.roomCount == 0)
    }

    @Test func maxParticipantsRefusesTheNextJoin() {
        var d = RoomDirectory(ids: SequentialIdentifiers())
        _ = d.createRoom("r", options: RoomOptions(maxParticipants: 1, emptyTimeout: .seconds(60)), now: t0)
        _ = join(&d, "a", room: "r", on: 1)
        let refused = join(&d, "b", room: "r", on: 2)
        #expect(refused == [.send(ConnectionID(2), .error(code: .roomFull, message: "room 'r' holds at most 1 participants"))])
        // The server's own limit still bounds a room's.
        var limits = RoomLimits()
        limits.participantsPerRoom = 5
        #expect(RoomOptions(maxParticipants: 6).problem(limits: limits) != nil)
        #expect(RoomOptions(metadata: String(repeating: "x", count: 4097)).problem(limits: limits) != nil)
        #expect(RoomOptions(emptyTimeout: .seconds(86_401)).problem(limits: limits) != nil)
    }

    @Test func createRefusesAnExistingRoomAndBadOptions() {
        var d = RoomDirectory(ids: SequentialIdentifiers())
        _ = join(&d, "a", room: "r", on: 1)
        #expect(d.createRoom("r", options: RoomOptions(), now: t0).failureCode == .roomExists)
        #expect(d.createRoom("s", options: RoomOptions(maxParticipants: 0), now: t0).failureCode == .badRequest)
    }

    @Test func removingTellsTheParticipantClosesItAndTheOthersSeeItLeave() throws {
        var d = RoomDirectory(ids: SequentialIdentifiers())
        _ = join(&d, "a", room: "r", on: 1)
        _ = join(&d, "b", room: "r", on: 2)
        let a = try #require(d.participant(on: ConnectionID(1)))
        let effects = try d.removeParticipant("a", of: "r").get()
        #expect(effects.first == .send(ConnectionID(1), .error(code: .removed, message: "removed by the server API")))
        #expect(effects.last == .close(ConnectionID(1)))
        #expect(effects.contains(.send(ConnectionID(2), .participantLeft(a))))
        #expect(d.participant(on: ConnectionID(1)) == nil)
        #expect(d.removeParticipant("a", of: "r").failureCode == .unknownParticipant)
        #expect(d.removeParticipant("a", of: "nope").failureCode == .unknownRoom)
    }

    @Test func metadataReachesEveryoneAndTheParticipantInfo() throws {
        var d = RoomDirectory(ids: SequentialIdentifiers())
        _ = join(&d, "a", room: "r", on: 1)
        _ = join(&d, "b", room: "r", on: 2)
        let (summary, effects) = try d.updateMetadata("{\"hand\":true}", of: "a", in: "r").get()
        #expect(summary.info.metadata == "{\"hand\":true}")
        #expect(effects.count == 2)
        #expect(effects.allSatisfy { if case .send(_, .participantUpdated(let p)) = $0 { p.identity == "a" } else { false } })
        // A newcomer sees it in `joined`.
        let joined = join(&d, "c", room: "r", on: 3)
        guard case .send(_, .joined(_, _, _, let others, _))? = joined.first else {
            Issue.record("no joined")
            return
        }
        #expect(others.first { $0.identity == "a" }?.metadata == "{\"hand\":true}")
    }

    @Test func tracksAreReportedPublishedAndUnpublishedBeforeTheirPublisherLeaves() throws {
        var d = RoomDirectory(configuration: .init(media: endpoint), ids: SequentialIdentifiers())
        _ = join(&d, "a", room: "r", on: 1)
        _ = d.handle(.publish(sdp: audioOffer), from: ConnectionID(1), now: t0)
        _ = d.handle(.leave, from: ConnectionID(1), now: t0)
        let kinds = d.takeEvents().map { "\($0)".prefix { $0 != "(" } }
        #expect(
            kinds == [
                "roomStarted", "participantJoined", "trackPublished", "trackUnpublished", "participantLeft", "roomFinished",
            ])
        // Muting through the API tells the publisher too.
        _ = join(&d, "b", room: "s", on: 2)
        let published = d.handle(.publish(sdp: audioOffer), from: ConnectionID(2), now: t0)
        let own = published.lazy.compactMap { if case .send(_, .publishAnswer(_, let t)) = $0 { t.first?.id } else { nil } }.first
        let track = try #require(own)
        let muted = try d.muteTrack(track, of: "b", in: "s", muted: true).get()
        #expect(muted.contains { if case .send(ConnectionID(2), .trackMuted(_, track, true)) = $0 { true } else { false } })
        #expect(d.participantSummaries(of: "s")?.first?.info.tracks.first?.muted == true)
        #expect(d.muteTrack("TR_x", of: "b", in: "s", muted: true).failureCode == .unknownTrack)
    }

    @Test func closingARoomRemovesEveryoneThenFinishesIt() throws {
        var d = RoomDirectory(ids: SequentialIdentifiers())
        _ = join(&d, "a", room: "r", on: 1)
        _ = join(&d, "b", room: "r", on: 2)
        _ = d.takeEvents()
        let effects = try d.closeRoom("r").get()
        #expect(effects.filter { if case .close = $0 { true } else { false } }.count == 2)
        #expect(d.roomCount == 0)
        let kinds = d.takeEvents().map { "\($0)".prefix { $0 != "(" } }
        #expect(kinds == ["participantLeft", "participantLeft", "roomFinished"])
    }
}

extension Result where Failure == RoomError {
    var failureCode: ErrorCode? {
        if case .failure(let e) = self { return e.code }
        return nil
    }
}
