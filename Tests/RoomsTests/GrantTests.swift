import RoomProtocol
import Testing
import Wire

@testable import Rooms

/// A directory with media, and participants joined with chosen grants.
private struct Room {
    var directory = RoomDirectory(configuration: .init(media: endpoint), ids: SequentialIdentifiers())
    let now = Instant(nanoseconds: 1_000_000_000)

    @discardableResult
    mutating func join(
        _ identity: String, on c: UInt64, room: String = "r", mode: RoomMode? = nil, _ grants: Grants
    ) throws -> ParticipantID {
        _ = directory.join(
            JoinRequest(identity: identity, room: room, grants: grants, mode: mode), connection: ConnectionID(c), now: now)
        return try #require(directory.participant(on: ConnectionID(c)))
    }

    mutating func send(_ m: ClientMessage, on c: UInt64) -> [RoomEffect] {
        directory.handle(m, from: ConnectionID(c), now: now)
    }

    /// Sends `m` and expects exactly one `forbidden` error back to the
    /// sender and nothing else: no media command, nothing to anyone else.
    mutating func expectForbidden(_ m: ClientMessage, on c: UInt64, sourceLocation: SourceLocation = #_sourceLocation) {
        let effects = send(m, on: c)
        #expect(effects.count == 1, "\(m): \(effects)", sourceLocation: sourceLocation)
        guard case .send(ConnectionID(c), .error(.forbidden, _))? = effects.first else {
            Issue.record("\(m): not forbidden: \(effects)", sourceLocation: sourceLocation)
            return
        }
    }
}

private let all = Grants(publish: true, subscribe: true)
private let subscribeOnly = Grants(subscribe: true)
private let publishOnly = Grants(publish: true)

private func sent(_ effects: [RoomEffect], to c: UInt64) -> [ServerMessage] {
    effects.compactMap { if case .send(ConnectionID(c), let m) = $0 { m } else { nil } }
}

/// A mesh payload in the documented shape, with one audio m-section.
private func meshOffer(_ direction: String) -> JSONValue {
    let sdp = audioOffer.replacingOccurrences(of: "a=sendonly", with: "a=\(direction)")
    return .object(["type": .string("offer"), "sdp": .string(sdp)])
}

@Suite struct GrantTests {
    /// A resume used to keep the grants of the first token: a client
    /// whose publish right was withdrawn kept its tracks and could publish
    /// again by reconnecting with a subscribe-only token.
    @Test func aResumeTakesTheGrantsOfItsToken() throws {
        var r = Room()
        let alice = try r.join("alice", on: 1, all)
        try r.join("bob", on: 2, all)
        _ = r.send(.publish(sdp: audioOffer), on: 1)
        #expect(r.directory.participants[alice]?.tracks.count == 1)
        _ = r.directory.disconnected(ConnectionID(1), now: r.now)

        _ = r.directory.join(
            JoinRequest(identity: "alice", room: "r", grants: subscribeOnly), connection: ConnectionID(3), now: r.now)
        #expect(r.directory.participant(on: ConnectionID(3)) == alice)
        // Her track stops for everyone, and she cannot publish again.
        #expect(r.directory.participants[alice]?.tracks.isEmpty == true)
        #expect(r.directory.participants[alice]?.grants == subscribeOnly)
        r.expectForbidden(.publish(sdp: audioOffer), on: 3)
        #expect(r.directory.participants[alice]?.tracks.isEmpty == true)
    }

    @Test func aResumeWithoutSubscribeStopsReceivingAndOneWithItStarts() throws {
        var r = Room()
        try r.join("alice", on: 1, all)
        let bob = try r.join("bob", on: 2, all)
        _ = r.send(.publish(sdp: audioOffer), on: 1)
        #expect(r.directory.participants[bob]?.subscriber?.subscriptions.count == 1)
        _ = r.directory.disconnected(ConnectionID(2), now: r.now)
        let resumed = r.directory.join(
            JoinRequest(identity: "bob", room: "r", grants: publishOnly), connection: ConnectionID(3), now: r.now)
        #expect(resumed.contains { if case .media(.stopForward(_, _, bob)) = $0 { true } else { false } }, "\(resumed)")
        #expect(r.directory.participants[bob]?.subscriber?.subscriptions.isEmpty == true)
        _ = r.directory.disconnected(ConnectionID(3), now: r.now)
        let again = r.directory.join(
            JoinRequest(identity: "bob", room: "r", grants: all), connection: ConnectionID(4), now: r.now)
        #expect(again.contains { if case .media(.forward(_, _, bob, _)) = $0 { true } else { false } }, "\(again)")
    }

    /// Every message that needs a grant, sent by a token without it.
    @Test func everyMessageWithoutItsGrantIsForbiddenAndChangesNothing() throws {
        var r = Room()
        let publisher = try r.join("pub", on: 1, publishOnly)
        try r.join("viewer", on: 2, subscribeOnly)
        try r.join("admin", on: 3, Grants(admin: true))
        _ = r.send(.publish(sdp: audioOffer), on: 1)
        let track = try #require(r.directory.participants[publisher]?.tracks.first?.id)

        for c: UInt64 in [2, 3] {
            r.expectForbidden(.publish(sdp: audioOffer), on: c)
            r.expectForbidden(.unpublish(trackID: track), on: c)
            r.expectForbidden(.mute(trackID: track, muted: true), on: c)
            r.expectForbidden(.call(to: publisher), on: c)
        }
        for c: UInt64 in [1, 3] {
            r.expectForbidden(.subscribe(trackID: track), on: c)
            r.expectForbidden(.unsubscribe(trackID: track), on: c)
            r.expectForbidden(.setPreference(trackID: track, preference: ReceivePreference(maxWidth: 0)), on: c)
        }
        r.expectForbidden(.call(to: publisher), on: 1)
        #expect(r.directory.participants[publisher]?.tracks.map(\.id) == [track])
        #expect(r.directory.participants[publisher]?.tracks.first?.muted == false)
    }

    @Test func callsStayInTheCallersRoomAndNeedBothGrantsOnBothSides() throws {
        var r = Room()
        try r.join("alice", on: 1, room: "one", all)
        let bob = try r.join("bob", on: 2, room: "two", all)
        let carol = try r.join("carol", on: 3, room: "one", subscribeOnly)
        let dave = try r.join("dave", on: 4, room: "one", all)

        let across = r.send(.call(to: bob), on: 1)
        #expect(sent(across, to: 1).first?.isError(.unknownParticipant) == true)
        #expect(sent(across, to: 2).isEmpty)
        r.expectForbidden(.call(to: carol), on: 1)

        let ring = r.send(.call(to: dave), on: 1)
        guard case .incomingCall(let call, _, _)? = sent(ring, to: 4).first else {
            Issue.record("no incoming call: \(ring)")
            return
        }
        // Alice resumes with a subscribe-only token while it rings: Dave's
        // answer is refused and nobody moves.
        _ = r.directory.disconnected(ConnectionID(1), now: r.now)
        _ = r.directory.join(
            JoinRequest(identity: "alice", room: "one", grants: subscribeOnly), connection: ConnectionID(5), now: r.now)
        r.expectForbidden(.answerCall(call), on: 4)
        #expect(r.directory.members(of: "one").count == 3)
    }

    /// A token names the room a participant joined; in a call it is in
    /// the call's room. A reconnect then used to make a second participant
    /// of the same identity in the lobby.
    @Test func aReconnectDuringACallResumesIntoTheCall() throws {
        var r = Room()
        let alice = try r.join("alice", on: 1, room: "lobby", all)
        let bob = try r.join("bob", on: 2, room: "lobby", all)
        guard case .incomingCall(let call, _, _)? = sent(r.send(.call(to: bob), on: 1), to: 2).first else {
            Issue.record("no incoming call")
            return
        }
        _ = r.send(.answerCall(call), on: 2)
        _ = r.directory.disconnected(ConnectionID(1), now: r.now)
        let resumed = r.directory.join(
            JoinRequest(identity: "alice", room: "lobby", grants: all), connection: ConnectionID(3), now: r.now)
        #expect(r.directory.participant(on: ConnectionID(3)) == alice)
        #expect(
            sent(resumed, to: 3).contains {
                if case .joined(alice, "call/\(call.rawValue)", _, _, true) = $0 { true } else { false }
            })
        #expect(r.directory.members(of: "lobby").isEmpty)
        #expect(r.directory.participantCount == 2)
    }

    @Test func meshSignalsNeedTheGrantsOfTheMediaTheyNegotiate() throws {
        var r = Room()
        let a = try r.join("a", on: 1, mode: .mesh, all)
        let viewer = try r.join("viewer", on: 2, subscribeOnly)
        let other = try r.join("other", on: 3, subscribeOnly)

        // A viewer may receive from a publisher, not send to it.
        r.expectForbidden(.meshSignal(to: a, payload: meshOffer("sendrecv")), on: 2)
        r.expectForbidden(.meshSignal(to: a, payload: meshOffer("sendonly")), on: 2)
        let recv = r.send(.meshSignal(to: a, payload: meshOffer("recvonly")), on: 2)
        #expect(sent(recv, to: 1) == [.meshSignal(from: viewer, payload: meshOffer("recvonly"))])
        // Two viewers have no media to exchange: not even candidates pass.
        r.expectForbidden(.meshSignal(to: other, payload: .object(["candidate": .string("x")])), on: 2)
        // A publisher may send to a viewer.
        let toViewer = r.send(.meshSignal(to: viewer, payload: meshOffer("sendonly")), on: 1)
        #expect(sent(toViewer, to: 2).count == 1)
        // SDP that cannot be checked is refused.
        r.expectForbidden(.meshSignal(to: a, payload: .object(["sdp": .string("not sdp")])), on: 2)
    }
}
