import RoomProtocol
import Testing
import Wire

@testable import Rooms

/// A directory with predictable ids, and helpers that read its effects.
private struct Harness {
    var directory = RoomDirectory(ids: SequentialIdentifiers())
    var now = Instant(nanoseconds: 1_000_000_000)

    mutating func join(
        _ identity: String, room: String = "r", on c: UInt64, mode: RoomMode? = nil,
        grants: Grants = Grants(publish: true, subscribe: true)
    ) -> [RoomEffect] {
        directory.join(
            JoinRequest(identity: identity, room: room, grants: grants, mode: mode), connection: ConnectionID(c), now: now)
    }

    mutating func send(_ m: ClientMessage, on c: UInt64) -> [RoomEffect] {
        directory.handle(m, from: ConnectionID(c), now: now)
    }
}

private func messages(_ effects: [RoomEffect], to c: UInt64) -> [ServerMessage] {
    effects.compactMap { if case .send(let to, let m) = $0, to == ConnectionID(c) { m } else { nil } }
}

private func joinedID(_ effects: [RoomEffect], _ c: UInt64) -> ParticipantID? {
    for m in messages(effects, to: c) { if case .joined(let id, _, _, _, _) = m { return id } }
    return nil
}

@Suite struct RoomDirectoryTests {
    @Test func joiningTellsTheNewcomerWhoIsThereAndTheOthersWhoCame() throws {
        var h = Harness()
        let a = try #require(joinedID(h.join("alice", on: 1), 1))
        let effects = h.join("bob", on: 2)
        let b = try #require(joinedID(effects, 2))
        #expect(
            messages(effects, to: 2) == [
                .joined(
                    participantID: b, room: "r", mode: .sfu,
                    participants: [ParticipantInfo(id: a, identity: "alice")], resumed: false)
            ])
        #expect(messages(effects, to: 1) == [.participantJoined(ParticipantInfo(id: b, identity: "bob"))])
    }

    @Test func roomsAreIsolated() throws {
        var h = Harness()
        _ = h.join("alice", room: "one", on: 1)
        let effects = h.join("bob", room: "two", on: 2)
        #expect(messages(effects, to: 1).isEmpty)
        if case .joined(_, _, _, let others, _) = messages(effects, to: 2).first { #expect(others.isEmpty) }
        #expect(h.directory.roomCount == 2)
    }

    @Test func leaveTellsTheOthersAndReleasesMedia() throws {
        var h = Harness()
        _ = h.join("alice", on: 1)
        let b = try #require(joinedID(h.join("bob", on: 2), 2))
        let effects = h.send(.leave, on: 2)
        #expect(messages(effects, to: 1) == [.participantLeft(b)])
        #expect(effects.contains(.media(.releaseParticipant(room: "r", participant: b))))
        #expect(h.directory.participant(on: ConnectionID(2)) == nil)
        #expect(messages(h.send(.ping, on: 2), to: 2) == [.pong])
        #expect(
            messages(h.send(.mute(trackID: "x", muted: true), on: 2), to: 2).first
                == .error(code: .notJoined, message: "send join first"))
    }

    @Test func reconnectingWithinTheGracePeriodResumesTheSameParticipant() throws {
        var h = Harness()
        _ = h.join("alice", on: 1)
        let b = try #require(joinedID(h.join("bob", on: 2), 2))
        #expect(h.directory.disconnected(ConnectionID(2), now: h.now).isEmpty)
        #expect(h.directory.nextDeadline == h.now + .seconds(20))
        h.now += .seconds(15)
        #expect(h.directory.handleTimeout(now: h.now).isEmpty)
        let effects = h.join("bob", on: 3)
        #expect(joinedID(effects, 3) == b)
        if case .joined(_, _, _, _, let resumed) = messages(effects, to: 3).first { #expect(resumed) }
        #expect(messages(effects, to: 1).isEmpty)  // nobody saw bob leave
        #expect(h.directory.nextDeadline == nil)
    }

    @Test func aParticipantGoneLongerThanTheGracePeriodLeaves() throws {
        var h = Harness()
        _ = h.join("alice", on: 1)
        let b = try #require(joinedID(h.join("bob", on: 2), 2))
        _ = h.directory.disconnected(ConnectionID(2), now: h.now)
        h.now += .seconds(20)
        let effects = h.directory.handleTimeout(now: h.now)
        #expect(messages(effects, to: 1) == [.participantLeft(b)])
        #expect(joinedID(h.join("bob", on: 3), 3) != b)
    }

    @Test func aConnectionClosedOnPurposeLeavesAtOnceWithoutAGracePeriod() throws {
        var h = Harness()
        _ = h.join("alice", on: 1)
        let b = try #require(joinedID(h.join("bob", on: 2), 2))
        let effects = h.directory.closedByClient(ConnectionID(2), now: h.now)
        #expect(messages(effects, to: 1) == [.participantLeft(b)])
        #expect(h.directory.nextDeadline == nil)
        // The socket's close that follows changes nothing, nor does a second one.
        #expect(h.directory.disconnected(ConnectionID(2), now: h.now).isEmpty)
        #expect(h.directory.closedByClient(ConnectionID(2), now: h.now).isEmpty)
        #expect(h.directory.nextDeadline == nil)
        // The same identity joining again is a new participant.
        let again = h.join("bob", on: 3)
        #expect(joinedID(again, 3) != b)
        if case .joined(_, _, _, _, let resumed) = messages(again, to: 3).first { #expect(!resumed) }
    }

    @Test func aSecondConnectionWithTheSameIdentityTakesOver() throws {
        var h = Harness()
        let a = try #require(joinedID(h.join("alice", on: 1), 1))
        let effects = h.join("alice", on: 2)
        #expect(effects.contains(.close(ConnectionID(1))))
        #expect(joinedID(effects, 2) == a)
        #expect(h.directory.participant(on: ConnectionID(1)) == nil)
        #expect(h.directory.members(of: "r") == [a])
    }

    @Test func drainingRefusesNewJoinsButKeepsResumes() throws {
        var h = Harness()
        let a = try #require(joinedID(h.join("alice", on: 1), 1))
        _ = h.directory.disconnected(ConnectionID(1), now: h.now)
        let drain = RoomDirectory<SequentialIdentifiers>.Drain(
            reason: "shutdown", deadline: h.now + .seconds(30), deadlineEpochMilliseconds: 1_700_000_030_000)
        // Alice is disconnected: nobody to tell.
        #expect(h.directory.startDraining(drain, now: h.now).isEmpty)
        #expect(messages(h.join("bob", on: 2), to: 2) == [.error(code: .draining, message: "the server is shutting down")])
        h.now += .milliseconds(10_500)
        let resumed = h.join("alice", on: 3)
        #expect(joinedID(resumed, 3) == a)
        // The resumed connection hears the deadline, with the seconds left
        // rounded up.
        #expect(messages(resumed, to: 3).last == .goingAway(reason: "shutdown", deadline: 1_700_000_030_000, seconds: 20))
    }

    @Test func drainingTellsEveryConnectedParticipantOnce() throws {
        var h = Harness()
        _ = h.join("alice", on: 1)
        _ = h.join("bob", room: "other", on: 2)
        _ = h.join("carol", on: 3)
        _ = h.directory.disconnected(ConnectionID(3), now: h.now)
        let drain = RoomDirectory<SequentialIdentifiers>.Drain(
            reason: "shutdown", deadline: h.now + .seconds(5), deadlineEpochMilliseconds: 42_000)
        let effects = h.directory.startDraining(drain, now: h.now)
        let notice = ServerMessage.goingAway(reason: "shutdown", deadline: 42_000, seconds: 5)
        #expect(messages(effects, to: 1) == [notice])
        #expect(messages(effects, to: 2) == [notice])
        #expect(effects.count == 2)
        #expect(h.directory.connections == [ConnectionID(1), ConnectionID(2)])
        #expect(h.directory.startDraining(drain, now: h.now).isEmpty)
        #expect(h.directory.isDraining)
    }

    @Test func modeIsFixedWhenTheRoomIsCreated() throws {
        var h = Harness()
        _ = h.join("alice", room: "m", on: 1, mode: .mesh)
        #expect(messages(h.join("bob", room: "m", on: 2, mode: .sfu), to: 2).first?.isError(.modeMismatch) == true)
        #expect(joinedID(h.join("bob", room: "m", on: 3), 3) != nil)  // no mode: take the room's
        #expect(h.directory.mode(of: "m") == .mesh)
    }

    @Test func meshRoomsRelaySignalsOnlyWithinTheRoomAndHaveALimit() throws {
        var h = Harness()
        let a = try #require(joinedID(h.join("alice", room: "m", on: 1, mode: .mesh), 1))
        let b = try #require(joinedID(h.join("bob", room: "m", on: 2), 2))
        let outsider = try #require(joinedID(h.join("eve", room: "other", on: 9, mode: .mesh), 9))
        // The server reads the SDP of a mesh offer for the grants
        // (GrantTests): a real one.
        let offer = JSONValue.object(["type": .string("offer"), "sdp": .string(audioOffer)])
        #expect(messages(h.send(.meshSignal(to: b, payload: offer), on: 1), to: 2) == [.meshSignal(from: a, payload: offer)])
        #expect(
            messages(h.send(.meshSignal(to: outsider, payload: offer), on: 1), to: 1).first?.isError(.unknownParticipant) == true)
        #expect(messages(h.send(.meshSignal(to: a, payload: offer), on: 1), to: 1).first?.isError(.unknownParticipant) == true)
        for i in 3...6 { #expect(joinedID(h.join("p\(i)", room: "m", on: UInt64(i)), UInt64(i)) != nil) }
        #expect(messages(h.join("p7", room: "m", on: 7), to: 7).first?.isError(.roomFull) == true)
        #expect(messages(h.send(.publish(sdp: "v=0"), on: 1), to: 1).first?.isError(.wrongMode) == true)
    }

    @Test func meshSignalsAreRefusedInSFURooms() throws {
        var h = Harness()
        _ = h.join("alice", on: 1)
        let b = try #require(joinedID(h.join("bob", on: 2), 2))
        #expect(messages(h.send(.meshSignal(to: b, payload: .null), on: 1), to: 1).first?.isError(.wrongMode) == true)
    }

    @Test func aCallRingsTheCalleeAndOnAnswerBothMoveToAPrivateRoom() throws {
        var h = Harness()
        let a = try #require(joinedID(h.join("alice", room: "lobby", on: 1), 1))
        let b = try #require(joinedID(h.join("bob", room: "lobby", on: 2), 2))
        let ring = h.send(.call(to: b), on: 1)
        // The caller's ringing names the callee.
        guard case .callRinging(_, let to, let calleeIdentity) = messages(ring, to: 1).first else {
            Issue.record("no call-ringing: \(ring)")
            return
        }
        #expect(to == b && calleeIdentity == "bob")
        guard case .incomingCall(let call, let from, let identity) = messages(ring, to: 2).first else {
            Issue.record("no incoming call: \(ring)")
            return
        }
        #expect(from == a && identity == "alice")
        let answer = h.send(.answerCall(call), on: 2)
        let room = "call/\(call.rawValue)"
        #expect(messages(answer, to: 1).contains(.callStarted(callID: call, room: room, peer: b, identity: "bob")))
        #expect(messages(answer, to: 2).contains(.callStarted(callID: call, room: room, peer: a, identity: "alice")))
        #expect(h.directory.members(of: room).sorted() == [a, b])
        #expect(h.directory.members(of: "lobby").isEmpty)

        // Hang up: both hear it and go back to the lobby.
        let end = h.send(.hangup(call), on: 1)
        #expect(messages(end, to: 2).contains(.callEnded(callID: call, reason: "hangup")))
        #expect(messages(end, to: 1).contains(.callEnded(callID: call, reason: "hangup")))
        #expect(h.directory.members(of: "lobby").sorted() == [a, b])
        #expect(h.directory.members(of: room).isEmpty)
    }

    @Test func callsCanBeDeclinedCancelledAndRefused() throws {
        var h = Harness()
        let a = try #require(joinedID(h.join("alice", on: 1), 1))
        let b = try #require(joinedID(h.join("bob", on: 2), 2))
        _ = try #require(joinedID(h.join("carol", on: 3), 3))
        #expect(messages(h.send(.call(to: ParticipantID("PA_nobody")), on: 1), to: 1).first?.isError(.unknownParticipant) == true)
        // Calling yourself is its own typed error, not "unknown participant".
        #expect(messages(h.send(.call(to: a), on: 1), to: 1).first?.isError(.cannotCallSelf) == true)

        guard case .incomingCall(let call, _, _) = messages(h.send(.call(to: b), on: 1), to: 2).first else {
            Issue.record("no incoming call")
            return
        }
        // Carol cannot reach a busy Bob, nor answer a call that is not hers.
        #expect(messages(h.send(.call(to: b), on: 3), to: 3).first?.isError(.busy) == true)
        #expect(messages(h.send(.answerCall(call), on: 3), to: 3).first?.isError(.unknownCall) == true)
        #expect(messages(h.send(.declineCall(call), on: 2), to: 1) == [.callDeclined(callID: call)])

        guard case .incomingCall(let second, _, _) = messages(h.send(.call(to: b), on: 1), to: 2).first else {
            Issue.record("no second incoming call")
            return
        }
        #expect(messages(h.send(.hangup(second), on: 1), to: 2) == [.callEnded(callID: second, reason: "cancelled")])
        #expect(messages(h.send(.answerCall(second), on: 2), to: 2).first?.isError(.unknownCall) == true)
    }

    @Test func aCallerWhoLeavesEndsTheCallForTheCallee() throws {
        var h = Harness()
        _ = h.join("alice", on: 1)
        let b = try #require(joinedID(h.join("bob", on: 2), 2))
        _ = try #require(joinedID(h.join("carol", on: 3), 3))
        guard case .incomingCall(let call, _, _) = messages(h.send(.call(to: b), on: 1), to: 2).first else {
            Issue.record("no incoming call")
            return
        }
        _ = h.send(.answerCall(call), on: 2)
        let effects = h.send(.leave, on: 1)
        #expect(messages(effects, to: 2).contains(.callEnded(callID: call, reason: "alice left")))
        // Bob returns to the room; Carol sees him come back and never sees
        // Alice, who left, reappear.
        #expect(messages(effects, to: 3).count == 1)
        #expect(h.directory.members(of: "r").contains(b))
        #expect(h.directory.members(of: "r").count == 2)
    }

    @Test func mutingUnknownTracksIsAnError() throws {
        var h = Harness()
        _ = h.join("alice", on: 1)
        #expect(messages(h.send(.mute(trackID: "TR_x", muted: true), on: 1), to: 1).first?.isError(.unknownTrack) == true)
    }
}

extension ServerMessage {
    func isError(_ code: ErrorCode) -> Bool { if case .error(let c, _) = self { c == code } else { false } }
}
