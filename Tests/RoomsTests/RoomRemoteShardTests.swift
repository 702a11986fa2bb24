import Negotiation
import RoomProtocol
import Testing
import Wire
import WorkerRelay

@testable import Rooms

/// The cascade in the rooms layer (docs/CLUSTER.md): participants another
/// node serves appear as members without a connection; local subscribers
/// receive their tracks through `addRemoteTrack`.
@Suite struct RoomRemoteShardTests {
    let now = Instant(nanoseconds: 1_000_000_000)

    func audioDescription() throws -> PublishedTrackDescription {
        let parsed = try RoomLimits().parse(audioOffer, offer: true).get()
        return try PublishOffer(parsed).tracks[0]
    }

    func remoteBob(tracks: [RemoteTrack]) -> RemoteParticipant {
        RemoteParticipant(id: ParticipantID("PA_bob"), identity: "bob", tracks: tracks)
    }

    /// Alice joins locally (subscribe grant); bob, on node "n2", publishes
    /// one audio track.
    func aliceWithRemoteBob() throws -> (RoomDirectory<SequentialIdentifiers>, [RoomEffect], RemoteTrack) {
        var directory = RoomDirectory(configuration: .init(media: endpoint), ids: SequentialIdentifiers())
        _ = directory.join(
            JoinRequest(identity: "alice", room: "r", grants: Grants(publish: true, subscribe: true)),
            connection: ConnectionID(1), now: now)
        let track = RemoteTrack(id: "TR_bob1", relay: RelayTrackID(7), description: try audioDescription())
        let effects = directory.setRemoteShard(room: "r", node: "n2", participants: [remoteBob(tracks: [track])])
        return (directory, effects, track)
    }

    @Test func aRemotePublisherIsShownAndItsTrackForwardedThroughTheNodeRelay() throws {
        let (directory, effects, track) = try aliceWithRemoteBob()
        let alice = ConnectionID(1)
        #expect(
            effects.contains {
                if case .send(alice, .participantJoined(let info)) = $0 { info.identity == "bob" } else { false }
            })
        #expect(
            effects.contains(
                .media(
                    .addRemoteTrack(
                        room: "r", participant: ParticipantID("PA_bob"), trackID: "TR_bob1", description: track.description,
                        node: "n2", relay: RelayTrackID(7)))))
        #expect(
            effects.contains {
                if case .send(alice, .trackPublished(ParticipantID("PA_bob"), let info)) = $0 {
                    info.id == "TR_bob1"
                } else {
                    false
                }
            })
        // Auto-subscribed: a forward to alice and a subscriber offer.
        #expect(
            effects.contains {
                if case .media(.forward("r", "TR_bob1", _, _)) = $0 { true } else { false }
            })
        #expect(effects.contains { if case .send(alice, .subscriberOffer) = $0 { true } else { false } })
        #expect(directory.wantedRemoteTracks(in: "r").map(\.trackID) == ["TR_bob1"])
        #expect(directory.wantedRemoteTracks(in: "r").map(\.node) == ["n2"])
        #expect(directory.localParticipantCount == 1)
        #expect(directory.participantCount == 2)
        // The local shard lists alice only.
        #expect(directory.localShard(of: "r").map(\.identity) == ["alice"])
    }

    @Test func theSameRecordAgainChangesNothing() throws {
        var (directory, _, track) = try aliceWithRemoteBob()
        #expect(directory.setRemoteShard(room: "r", node: "n2", participants: [remoteBob(tracks: [track])]).isEmpty)
    }

    @Test func aRemoteTrackThatStopsAndAParticipantThatLeavesAreRemoved() throws {
        var (directory, _, track) = try aliceWithRemoteBob()
        let alice = ConnectionID(1)
        let unpublished = directory.setRemoteShard(room: "r", node: "n2", participants: [remoteBob(tracks: [])])
        #expect(
            unpublished.contains(
                .media(.removeIncomingTrack(room: "r", participant: ParticipantID("PA_bob"), trackID: "TR_bob1"))))
        #expect(unpublished.contains(.send(alice, .trackUnpublished(participantID: ParticipantID("PA_bob"), trackID: "TR_bob1"))))
        #expect(unpublished.contains { if case .media(.stopForward("r", "TR_bob1", _)) = $0 { true } else { false } })
        #expect(directory.wantedRemoteTracks(in: "r").isEmpty)

        _ = directory.setRemoteShard(room: "r", node: "n2", participants: [remoteBob(tracks: [track])])
        let left = directory.setRemoteShard(room: "r", node: "n2", participants: [])
        #expect(left.contains(.send(alice, .participantLeft(ParticipantID("PA_bob")))))
        #expect(left.contains(.media(.releaseParticipant(room: "r", participant: ParticipantID("PA_bob")))))
        #expect(directory.participantCount == 1)
        #expect(directory.remoteNodes(in: "r").isEmpty)
    }

    /// A subscriber's preference outlives a blink of the remote publisher
    /// (its node's part unread once: it leaves and comes back under the
    /// same ids): the new subscription starts with it. roombot's
    /// `--layout` asks once per track, and without this a capped far
    /// subscriber came back uncapped.
    @Test func aPreferenceIsKeptWhenTheRemotePublisherBlinks() throws {
        var (directory, _, track) = try aliceWithRemoteBob()
        let alice = ConnectionID(1)
        let capped = ReceivePreference(maxWidth: 256)
        let asked = directory.handle(.setPreference(trackID: "TR_bob1", preference: capped), from: alice, now: now)
        let aliceID = try #require(directory.participant(on: alice))
        #expect(asked == [.media(.setPreference(room: "r", trackID: "TR_bob1", subscriber: aliceID, preference: capped))])
        _ = directory.setRemoteShard(room: "r", node: "n2", participants: [])
        let back = directory.setRemoteShard(room: "r", node: "n2", participants: [remoteBob(tracks: [track])])
        let forward = try #require(
            back.firstIndex { if case .media(.forward("r", "TR_bob1", aliceID, _)) = $0 { true } else { false } })
        let preference = try #require(
            back.firstIndex(of: .media(.setPreference(room: "r", trackID: "TR_bob1", subscriber: aliceID, preference: capped))))
        #expect(forward < preference)
    }

    @Test func rememberedPreferencesAreBounded() {
        var state = SubscriberState(
            credentials: .random(),
            builder: SubscriberOfferBuilder(
                sessionID: 1,
                local: LocalTransportParameters(
                    credentials: .random(), fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, candidates: [])))
        for i in 0..<1_000 { state.rememberPreference(ReceivePreference(maxLayer: 0), for: "TR_\(i)", limit: 8) }
        #expect(state.preferences.count <= 16)
    }

    @Test func aLocalJoinerSeesRemoteMembersAndReceivesTheirTracks() throws {
        var (directory, _, _) = try aliceWithRemoteBob()
        let carol = ConnectionID(2)
        let effects = directory.join(
            JoinRequest(identity: "carol", room: "r", grants: Grants(subscribe: true)), connection: carol, now: now)
        #expect(
            effects.contains {
                if case .send(carol, .joined(_, "r", _, let others, false)) = $0 {
                    Set(others.map(\.identity)) == ["alice", "bob"]
                } else {
                    false
                }
            })
        #expect(effects.contains { if case .media(.forward("r", "TR_bob1", _, _)) = $0 { true } else { false } })
    }

    /// The last local member leaves: this node serves no part of the room,
    /// so the remote members and their tracks go with it.
    @Test func theRoomGoesWithItsLastLocalMember() throws {
        var (directory, _, _) = try aliceWithRemoteBob()
        let effects = directory.handle(.leave, from: ConnectionID(1), now: now)
        #expect(effects.contains(.media(.releaseParticipant(room: "r", participant: ParticipantID("PA_bob")))))
        #expect(directory.roomCount == 0)
        #expect(directory.participantCount == 0)
        // A record for a room this node does not hold is not taken.
        #expect(directory.setRemoteShard(room: "r", node: "n2", participants: [remoteBob(tracks: [])]).isEmpty)
        #expect(directory.roomCount == 0)
    }

    /// A remote participant never takes a local identity over, and counts
    /// neither against the room's local limit nor as a call target.
    @Test func remoteMembersAreNotResumedCalledOrCounted() throws {
        var (directory, _, _) = try aliceWithRemoteBob()
        // bob reconnects here (his node died, its record still lives): a
        // new local participant, not a resume of the remote one.
        let bobHere = ConnectionID(3)
        let joined = directory.join(
            JoinRequest(identity: "bob", room: "r", grants: Grants(publish: true, subscribe: true)), connection: bobHere,
            now: now)
        #expect(
            joined.contains {
                if case .send(bobHere, .joined(let id, _, _, _, false)) = $0 { id != ParticipantID("PA_bob") } else { false }
            })
        let call = directory.handle(.call(to: ParticipantID("PA_bob")), from: ConnectionID(1), now: now)
        #expect(call.contains { if case .send(_, .error(.unknownParticipant, _)) = $0 { true } else { false } })
        #expect(directory.localParticipantCount == 2)
    }

    /// Ids clash with a local participant or a track id already in the
    /// room (a damaged record): skipped, nothing else changes.
    @Test func aRecordReusingLocalIdsIsSkipped() throws {
        var (directory, _, track) = try aliceWithRemoteBob()
        let aliceID = try #require(directory.participant(on: ConnectionID(1)))
        let clash = RemoteParticipant(id: aliceID, identity: "mallory", tracks: [track])
        #expect(directory.setRemoteShard(room: "r", node: "n3", participants: [clash]).isEmpty)
        let sameTrack = RemoteParticipant(id: ParticipantID("PA_eve"), identity: "eve", tracks: [track])
        let effects = directory.setRemoteShard(room: "r", node: "n3", participants: [sameTrack])
        #expect(!effects.contains { if case .media(.addRemoteTrack) = $0 { true } else { false } })
        #expect(directory.remoteNodes(in: "r") == ["n2", "n3"])
    }
}
