import RoomProtocol
import Testing
import Wire
import WorkerRelay

@testable import Rooms

/// WHEP audiences beyond the room's home (issue #15, docs/CLUSTER.md): a
/// WHEP offer placed on a node that serves no part of its room yet is
/// answered with the tracks the other nodes serve, read just before.
@Suite struct RemoteWHEPTests {
    /// Node n2's directory: its sequential ids start past n1's (real ids
    /// are random; equal ones would be a damaged record).
    func n2() -> MediaHarness {
        var h = MediaHarness()
        for _ in 0..<100 { _ = h.directory.ids.next(prefix: "") }
        return h
    }

    /// Alice publishes by WHIP on node n1 (aiortc's audio and video); what
    /// n1 writes of her to Redis, as another node reads it.
    func aliceOnN1() throws -> [String: [RemoteParticipant]] {
        var n1 = MediaHarness()
        _ = try n1.whip("alice").get()
        let part = n1.directory.localShard(of: "r")
        #expect(part.count == 1)
        return [
            "n1": part.map { p in
                RemoteParticipant(
                    id: p.id, identity: p.identity,
                    tracks: p.tracks.enumerated().map { i, t in
                        RemoteTrack(id: t.id, relay: RelayTrackID(UInt32(i + 1)), description: t.description)
                    })
            }
        ]
    }

    @Test func aViewerOnANodeWithoutThePartPlaysTheRemotePublisher() throws {
        let parts = try aliceOnN1()
        let alice = try #require(parts["n1"]?.first)
        var n2 = n2()
        n2.directory.sessionNode = "n2~00000000000000ab"
        let answer = try n2.directory.whepPlay(
            JoinRequest(identity: "carol", room: "r", grants: MediaHarness.all), target: nil,
            parsed: RoomLimits().parse(try MediaHarness.fixture("chromium-recvonly.sdp"), offer: true), remoteParts: parts,
            now: n2.now
        ).get()
        // Both of alice's tracks come over the node relay, and are added
        // before carol's forwards name them.
        let added = answer.effects.compactMap { e -> String? in
            if case .media(.addRemoteTrack(_, alice.id, let track, _, "n1", _)) = e { track } else { nil }
        }
        #expect(added == alice.tracks.map(\.id))
        let firstForward = try #require(answer.effects.firstIndex { if case .media(.forward) = $0 { true } else { false } })
        let lastAdd = try #require(answer.effects.lastIndex { if case .media(.addRemoteTrack) = $0 { true } else { false } })
        #expect(lastAdd < firstForward)
        #expect(Set(forwards(answer.effects).map(\.0)) == Set(alice.tracks.map(\.id)))
        #expect(answer.answer.contains("a=msid:\(alice.id) "))
        // n2's part: carol, who wants alice's tracks from n1.
        #expect(n2.directory.localShard(of: "r").map(\.identity) == ["carol"])
        #expect(n2.directory.wantedRemoteTracks(in: "r").map(\.trackID) == alice.tracks.map(\.id).sorted())
        #expect(n2.directory.wantedRemoteTracks(in: "r").allSatisfy { $0.node == "n1" })
        // Her session id names n2, where any node sends its DELETE.
        #expect(HTTPSessionID.node(of: answer.session) == "n2~00000000000000ab")
        #expect(n2.directory.hasSession(.whep, room: "r", session: answer.session))
    }

    @Test func aRefusedOfferLeavesNothingBehind() throws {
        let parts = try aliceOnN1()
        var n2 = n2()
        let refused = n2.directory.whepPlay(
            JoinRequest(identity: "carol", room: "r", grants: MediaHarness.all), target: "nobody",
            parsed: RoomLimits().parse(try MediaHarness.fixture("chromium-recvonly.sdp"), offer: true), remoteParts: parts,
            now: n2.now)
        guard case .failure(let error) = refused else {
            Issue.record("played a target nobody is")
            return
        }
        #expect(error.code == .nothingPublished)
        #expect(n2.directory.participantCount == 0)
        #expect(n2.directory.members(of: "r").isEmpty)
        #expect(n2.directory.remoteNodes(in: "r").isEmpty)
    }

    @Test func sessionIDsNameTheirNodeOnlyInACluster() {
        #expect(HTTPSessionID.make("SE_7", node: nil) == "SE_7")
        #expect(HTTPSessionID.node(of: "SE_7") == nil)
        #expect(HTTPSessionID.make("SE_7", node: "a.b-c_d~0f") == "SE_7@a.b-c_d~0f")
        #expect(HTTPSessionID.node(of: "SE_7@a.b-c_d~0f") == "a.b-c_d~0f")
        #expect(HTTPSessionID.node(of: "SE_7@") == nil)
    }
}
