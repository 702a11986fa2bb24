import MediaRouter
import Negotiation
import RoomProtocol
import Rooms
import Testing
import WorkerRelay

/// The planner's cascade rules (RoomSpanPlanner+Nodes): remote tracks
/// through the relay worker, local tracks to other nodes, on plain values.
@Suite struct RoomSpanPlannerNodeTests {
    typealias T = RoomSpanPlannerTests
    static let room = T.room
    /// The relay slot of the other node: past the two workers.
    static let slot = 2
    static let remoteRelay = RelayTrackID(700)
    static let sinkRelay = RelayTrackID(900)

    static func addRemote(_ trackID: String = "TR_r", relay: RelayTrackID = remoteRelay) -> MediaCommand {
        .addRemoteTrack(
            room: room, participant: T.p("far"), trackID: trackID, description: T.audio, node: "node-b", relay: relay)
    }

    static func addSink(_ trackID: String = "TR_1", relay: RelayTrackID = sinkRelay) -> MediaCommand {
        .addRemoteSink(room: room, trackID: trackID, node: "node-b", relay: relay)
    }

    static func removeSink(_ trackID: String = "TR_1") -> MediaCommand {
        .removeRemoteSink(room: room, trackID: trackID, node: "node-b")
    }

    static func holdRemote(_ trackID: String = "TR_r") -> PlannedCommand {
        PlannedCommand(
            worker: 0,
            .addRelayedTrack(
                room: room, publisher: T.p("far"), trackID: trackID, description: T.audio, relay: remoteRelay, from: slot))
    }

    static func ring(
        _ relay: RelayTrackID, _ trackID: String, publisher: String, from source: Int, to w: Int
    )
        -> [PlannedCommand]
    {
        [
            PlannedCommand(
                worker: w,
                .addRelayedTrack(
                    room: room, publisher: T.p(publisher), trackID: trackID, description: T.audio, relay: relay, from: source
                )),
            PlannedCommand(worker: source, .addRelaySink(room: room, trackID: trackID, relay: relay, to: w)),
        ]
    }

    /// Two workers, subscribers b0 on worker 0 and b1 on worker 1.
    static func withSubscribers() -> RoomSpanPlanner {
        var planner = RoomSpanPlanner(workers: 2)
        _ = planner.plan(T.open("b0", on: 0))
        _ = planner.plan(T.open("b1", on: 1))
        return planner
    }

    // MARK: Remote tracks

    @Test func aRemoteTrackReachesTheRelayWorkerOnlyWithItsFirstLocalSubscription() throws {
        var planner = Self.withSubscribers()
        #expect(planner.plan(Self.addRemote(), nodeSlot: Self.slot).isEmpty, "no subscriber: nothing crosses")
        #expect(!planner.holdsRemoteTrack("TR_r", in: Self.room))
        #expect(
            planner.plan(T.forward("TR_r", to: "b0")) == [
                Self.holdRemote(), PlannedCommand(worker: 0, .media(T.forward("TR_r", to: "b0"))),
            ])
        // A subscriber on worker 1: a ring from the relay worker, whose
        // copy of the track is its source there.
        let far = planner.plan(T.forward("TR_r", to: "b1"))
        let ring = try #require(T.relayID(far))
        #expect(
            far
                == Self.ring(ring, "TR_r", publisher: "far", from: 0, to: 1) + [
                    PlannedCommand(worker: 1, .media(T.forward("TR_r", to: "b1")))
                ])
        #expect(ring != Self.remoteRelay)
        #expect(planner.sourceWorker(of: "TR_r", in: Self.room) == 0)
        #expect(planner.relays(of: "TR_r", in: Self.room) == [1: 1])
        // The first subscription ends: the track stays for the other.
        #expect(planner.plan(T.stop("TR_r", "b0")) == [PlannedCommand(worker: 0, .media(T.stop("TR_r", "b0")))])
        // The last ends: its ring, then the relay worker's copy.
        #expect(
            planner.plan(T.stop("TR_r", "b1")) == [
                PlannedCommand(worker: 1, .media(T.stop("TR_r", "b1"))),
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_r", to: 1)),
                PlannedCommand(worker: 1, .removeRelayedTrack(room: Self.room, trackID: "TR_r")),
                PlannedCommand(worker: 0, .removeRelayedTrack(room: Self.room, trackID: "TR_r")),
            ])
        #expect(!planner.holdsRemoteTrack("TR_r", in: Self.room))
        // Subscribing again brings it back.
        #expect(planner.plan(T.forward("TR_r", to: "b0")).first == Self.holdRemote())
    }

    @Test func aSubscriberOffTheRelayWorkerAloneBringsTheTrackThroughARing() throws {
        var planner = Self.withSubscribers()
        _ = planner.plan(Self.addRemote(), nodeSlot: Self.slot)
        let out = planner.plan(T.forward("TR_r", to: "b1"))
        let ring = try #require(T.relayID(out))
        #expect(
            out
                == [Self.holdRemote()] + Self.ring(ring, "TR_r", publisher: "far", from: 0, to: 1) + [
                    PlannedCommand(worker: 1, .media(T.forward("TR_r", to: "b1")))
                ])
    }

    @Test func aForwardWaitsForItsRemoteTrack() {
        var planner = Self.withSubscribers()
        #expect(planner.plan(T.forward("TR_r", to: "b0")).isEmpty)
        #expect(planner.pendingForwards(in: Self.room) == 1)
        #expect(
            planner.plan(Self.addRemote(), nodeSlot: Self.slot) == [
                Self.holdRemote(), PlannedCommand(worker: 0, .media(T.forward("TR_r", to: "b0"))),
            ])
        #expect(planner.pendingForwards(in: Self.room) == 0)
    }

    @Test func theSameRemoteTrackAgainChangesNothingAndANewOriginReplacesIt() {
        var planner = Self.withSubscribers()
        _ = planner.plan(Self.addRemote(), nodeSlot: Self.slot)
        _ = planner.plan(T.forward("TR_r", to: "b0"))
        // The cluster layer re-applies what it reads at every refresh.
        #expect(planner.plan(Self.addRemote(), nodeSlot: Self.slot).isEmpty)
        #expect(planner.holdsRemoteTrack("TR_r", in: Self.room))
        // Another id from its node: the old copy goes (its subscriptions
        // with it, as for a republished local track).
        #expect(
            planner.plan(Self.addRemote(relay: RelayTrackID(701)), nodeSlot: Self.slot) == [
                PlannedCommand(worker: 0, .removeRelayedTrack(room: Self.room, trackID: "TR_r"))
            ])
        #expect(!planner.holdsRemoteTrack("TR_r", in: Self.room))
    }

    @Test func removingARemoteTrackTearsDownItsRingsThenTheRelayWorkersCopy() {
        var planner = Self.withSubscribers()
        _ = planner.plan(Self.addRemote(), nodeSlot: Self.slot)
        _ = planner.plan(T.forward("TR_r", to: "b0"))
        _ = planner.plan(T.forward("TR_r", to: "b1"))
        let remove = MediaCommand.removeIncomingTrack(room: Self.room, participant: T.p("far"), trackID: "TR_r")
        // No source worker holds it as a publisher's: no removeIncomingTrack.
        #expect(
            planner.plan(remove) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_r", to: 1)),
                PlannedCommand(worker: 1, .removeRelayedTrack(room: Self.room, trackID: "TR_r")),
                PlannedCommand(worker: 0, .removeRelayedTrack(room: Self.room, trackID: "TR_r")),
            ])
        #expect(planner.sourceWorker(of: "TR_r", in: Self.room) == nil)
        #expect(planner.plan(T.stop("TR_r", "b1")) == [PlannedCommand(worker: 1, .media(T.stop("TR_r", "b1")))])
    }

    @Test func releasingARemotePublisherTearsDownItsTracksThenEveryWorkerHearsIt() {
        var planner = Self.withSubscribers()
        _ = planner.plan(Self.addRemote(), nodeSlot: Self.slot)
        _ = planner.plan(T.forward("TR_r", to: "b1"))
        let leave = MediaCommand.releaseParticipant(room: Self.room, participant: T.p("far"))
        #expect(
            planner.plan(leave) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_r", to: 1)),
                PlannedCommand(worker: 1, .removeRelayedTrack(room: Self.room, trackID: "TR_r")),
                PlannedCommand(worker: 0, .removeRelayedTrack(room: Self.room, trackID: "TR_r")),
                PlannedCommand(worker: 0, .media(leave)),
                PlannedCommand(worker: 1, .media(leave)),
            ])
        #expect(planner.participantsPerWorker(in: Self.room) == [0: 1, 1: 1])
    }

    @Test func withOneWorkerARemoteTrackAndASinkStayOnIt() {
        var planner = RoomSpanPlanner(workers: 1)
        _ = planner.plan(Self.addRemote(), nodeSlot: 1)
        let hold = PlannedCommand(
            worker: 0,
            .addRelayedTrack(
                room: Self.room, publisher: T.p("far"), trackID: "TR_r", description: T.audio, relay: Self.remoteRelay, from: 1))
        #expect(
            planner.plan(T.forward("TR_r", to: "b0")) == [hold, PlannedCommand(worker: 0, .media(T.forward("TR_r", to: "b0")))])
        _ = planner.plan(T.publish("pub", "TR_1"))
        #expect(
            planner.plan(Self.addSink(), nodeSlot: 1) == [
                PlannedCommand(worker: 0, .addRelaySink(room: Self.room, trackID: "TR_1", relay: Self.sinkRelay, to: 1))
            ])
    }

    // MARK: Node sinks

    @Test func aSinkFromTheRelayWorkerGoesStraightToTheNode() {
        var planner = T.withPublisher(workers: 2, on: 0)
        let sink = PlannedCommand(
            worker: 0, .addRelaySink(room: Self.room, trackID: "TR_1", relay: Self.sinkRelay, to: Self.slot))
        #expect(planner.plan(Self.addSink(), nodeSlot: Self.slot) == [sink])
        #expect(planner.plan(Self.addSink(), nodeSlot: Self.slot).isEmpty, "the same sink again: a refresh")
        #expect(planner.nodeSinks(of: "TR_1", in: Self.room) == [Self.slot: Self.sinkRelay])
        #expect(planner.relays(of: "TR_1", in: Self.room).isEmpty)
        #expect(
            planner.plan(Self.removeSink(), nodeSlot: Self.slot) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: Self.slot))
            ])
        #expect(planner.nodeSinks(of: "TR_1", in: Self.room).isEmpty)
        #expect(planner.plan(Self.removeSink(), nodeSlot: Self.slot).isEmpty)
    }

    @Test func aSinkFromAnotherWorkerSharesTheRingWithTheRelayWorkersSubscribers() throws {
        var planner = T.withPublisher(workers: 2, on: 1)
        _ = planner.plan(T.open("a", on: 0))
        let forward = planner.plan(T.forward("TR_1", to: "a"))
        let ring = try #require(T.relayID(forward))
        let sink = PlannedCommand(
            worker: 0, .addRelaySink(room: Self.room, trackID: "TR_1", relay: Self.sinkRelay, to: Self.slot))
        // The relay worker's copy goes on to the node: no second ring.
        #expect(planner.plan(Self.addSink(), nodeSlot: Self.slot) == [sink])
        // Its last subscriber there leaves: the ring stays for the node.
        #expect(planner.plan(T.stop("TR_1", "a")) == [PlannedCommand(worker: 0, .media(T.stop("TR_1", "a")))])
        #expect(planner.relays(of: "TR_1", in: Self.room) == [0: 0])
        // The node lets go: the sink, then the ring nobody needs.
        #expect(
            planner.plan(Self.removeSink(), nodeSlot: Self.slot) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: Self.slot)),
                PlannedCommand(worker: 1, .removeRelaySink(room: Self.room, trackID: "TR_1", to: 0)),
                PlannedCommand(worker: 0, .removeRelayedTrack(room: Self.room, trackID: "TR_1")),
            ])
        #expect(planner.relays(of: "TR_1", in: Self.room).isEmpty)
        _ = ring
    }

    @Test func aSinkFirstOpensTheRingAndTheRelayWorkersSubscribersKeepIt() throws {
        var planner = T.withPublisher(workers: 2, on: 1)
        _ = planner.plan(T.open("a", on: 0))
        let out = planner.plan(Self.addSink(), nodeSlot: Self.slot)
        let ring = try #require(T.relayID(out))
        #expect(
            out
                == Self.ring(ring, "TR_1", publisher: "pub", from: 1, to: 0) + [
                    PlannedCommand(
                        worker: 0, .addRelaySink(room: Self.room, trackID: "TR_1", relay: Self.sinkRelay, to: Self.slot))
                ])
        #expect(planner.plan(T.forward("TR_1", to: "a")) == [PlannedCommand(worker: 0, .media(T.forward("TR_1", to: "a")))])
        #expect(
            planner.plan(Self.removeSink(), nodeSlot: Self.slot) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: Self.slot))
            ])
        #expect(
            planner.plan(T.stop("TR_1", "a")) == [
                PlannedCommand(worker: 0, .media(T.stop("TR_1", "a"))),
                PlannedCommand(worker: 1, .removeRelaySink(room: Self.room, trackID: "TR_1", to: 0)),
                PlannedCommand(worker: 0, .removeRelayedTrack(room: Self.room, trackID: "TR_1")),
            ])
    }

    @Test func aSinkWaitsForItsTrackAndARemovalCancelsIt() throws {
        var planner = RoomSpanPlanner(workers: 2)
        _ = planner.plan(T.open("pub", .publisher, on: 1))
        #expect(planner.plan(Self.addSink(), nodeSlot: Self.slot).isEmpty)
        #expect(planner.pendingNodeSinks(in: Self.room) == 1)
        let out = planner.plan(T.publish("pub", "TR_1"))
        let ring = try #require(T.relayID(out))
        #expect(
            out
                == [PlannedCommand(worker: 1, .media(T.publish("pub", "TR_1")))]
                + Self.ring(ring, "TR_1", publisher: "pub", from: 1, to: 0) + [
                    PlannedCommand(
                        worker: 0, .addRelaySink(room: Self.room, trackID: "TR_1", relay: Self.sinkRelay, to: Self.slot))
                ])
        #expect(planner.pendingNodeSinks(in: Self.room) == 0)
        // A sink for a track not published yet, then withdrawn.
        #expect(planner.plan(Self.addSink("TR_2"), nodeSlot: Self.slot).isEmpty)
        #expect(planner.plan(Self.removeSink("TR_2"), nodeSlot: Self.slot).isEmpty)
        #expect(planner.pendingNodeSinks(in: Self.room) == 0)
        #expect(planner.plan(T.publish("pub", "TR_2")) == [PlannedCommand(worker: 1, .media(T.publish("pub", "TR_2")))])
    }

    @Test func unpublishingEndsTheNodeSinksThenTheRingsThenTheSource() {
        var planner = T.withPublisher(workers: 2, on: 1)
        _ = planner.plan(Self.addSink(), nodeSlot: Self.slot)
        let remove = MediaCommand.removeIncomingTrack(room: Self.room, participant: T.p("pub"), trackID: "TR_1")
        #expect(
            planner.plan(remove) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: Self.slot)),
                PlannedCommand(worker: 1, .removeRelaySink(room: Self.room, trackID: "TR_1", to: 0)),
                PlannedCommand(worker: 0, .removeRelayedTrack(room: Self.room, trackID: "TR_1")),
                PlannedCommand(worker: 1, .media(remove)),
            ])
        #expect(planner.nodeSinks(of: "TR_1", in: Self.room).isEmpty)
        // Forgotten, not waiting: publishing the id again sends nothing on.
        #expect(planner.plan(T.publish("pub", "TR_1")) == [PlannedCommand(worker: 1, .media(T.publish("pub", "TR_1")))])
    }

    @Test func aLeavingPublisherEndsItsNodeSinks() {
        var planner = T.withPublisher(workers: 2, on: 0)
        _ = planner.plan(Self.addSink(), nodeSlot: Self.slot)
        let leave = MediaCommand.releaseParticipant(room: Self.room, participant: T.p("pub"))
        #expect(
            planner.plan(leave) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: Self.slot)),
                PlannedCommand(worker: 0, .media(leave)),
            ])
        #expect(planner.roomCount == 0)
    }

    @Test func aRepublishedTrackGoesBackToTheNodesThatWantedIt() {
        var planner = T.withPublisher(workers: 2, on: 0)
        _ = planner.plan(Self.addSink(), nodeSlot: Self.slot)
        let sink = PlannedCommand(
            worker: 0, .addRelaySink(room: Self.room, trackID: "TR_1", relay: Self.sinkRelay, to: Self.slot))
        #expect(
            planner.plan(T.publish("pub", "TR_1")) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: Self.slot)),
                PlannedCommand(worker: 0, .media(T.publish("pub", "TR_1"))), sink,
            ])
    }

    // MARK: Refused

    @Test func aTrackFromANodeNeverGoesToAnotherNode() {
        var planner = Self.withSubscribers()
        _ = planner.plan(Self.addRemote(), nodeSlot: Self.slot)
        #expect(planner.plan(Self.addSink("TR_r"), nodeSlot: 3).isEmpty)
        #expect(planner.ignoredCommands == 1)
        #expect(planner.nodeSinks(of: "TR_r", in: Self.room).isEmpty)
        // Also when the sink waited for a track that turned out remote.
        #expect(planner.plan(Self.addSink("TR_s"), nodeSlot: 3).isEmpty)
        #expect(planner.plan(Self.addRemote("TR_s"), nodeSlot: Self.slot).isEmpty)
        #expect(planner.ignoredCommands == 2)
        #expect(planner.pendingNodeSinks(in: Self.room) == 0)
    }

    @Test func aNodeCommandWithoutASlotIsIgnoredAndCounted() {
        var planner = Self.withSubscribers()
        #expect(planner.plan(Self.addRemote()).isEmpty)
        #expect(planner.plan(Self.addSink()).isEmpty)
        #expect(planner.plan(Self.removeSink()).isEmpty)
        #expect(planner.ignoredCommands == 3)
        #expect(planner.plan(T.forward("TR_r", to: "b0")).isEmpty, "the track was never known")
    }

    @Test func aForgottenNodeLeavesNothingBehind() {
        var planner = T.withPublisher(workers: 2, on: 1)
        _ = planner.plan(T.open("b0", on: 0))
        _ = planner.plan(Self.addSink(), nodeSlot: Self.slot)
        _ = planner.plan(Self.addSink("TR_later"), nodeSlot: Self.slot)
        _ = planner.plan(Self.addRemote(), nodeSlot: Self.slot)
        _ = planner.plan(T.forward("TR_r", to: "b0"))
        #expect(
            planner.forgetNode(slot: Self.slot) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: Self.slot)),
                PlannedCommand(worker: 1, .removeRelaySink(room: Self.room, trackID: "TR_1", to: 0)),
                PlannedCommand(worker: 0, .removeRelayedTrack(room: Self.room, trackID: "TR_1")),
                PlannedCommand(worker: 0, .removeRelayedTrack(room: Self.room, trackID: "TR_r")),
            ])
        #expect(planner.pendingNodeSinks(in: Self.room) == 0)
        #expect(planner.sourceWorker(of: "TR_r", in: Self.room) == nil)
        #expect(planner.forgetNode(slot: Self.slot).isEmpty)
    }
}
