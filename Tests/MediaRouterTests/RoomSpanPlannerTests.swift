import ICE
import MediaRouter
import Negotiation
import RTP
import RoomProtocol
import Rooms
import SDP
import Testing
import Wire
import WorkerRelay

/// The plane's fan-out over workers, on plain values.
@Suite struct RoomSpanPlannerTests {
    static let room = "r"
    static func p(_ name: String) -> ParticipantID { ParticipantID(name) }

    static let credentials = ICECredentials.random()
    static func open(_ who: String, _ role: TransportRole = .subscriber, on worker: Int) -> MediaCommand {
        .openTransport(room: room, worker: worker, participant: p(who), role: role, local: credentials, remote: nil)
    }

    static let audio = PublishedTrackDescription(
        mid: "0", kind: .audio, direction: .sendonly, msid: nil, codecs: [.opus(payloadType: PayloadType(rawValue: 111)!)],
        simulcast: [], sources: nil, headerExtensions: HeaderExtensionIDs(), reducedSizeRTCP: true)

    static func publish(_ who: String, _ trackID: String) -> MediaCommand {
        .addIncomingTrack(room: room, participant: p(who), trackID: trackID, description: audio)
    }

    static func outgoing(_ trackID: String, ssrc: UInt32 = 1) -> OutgoingTrack {
        OutgoingTrack(
            kind: .audio, codec: .opus(payloadType: PayloadType(rawValue: 111)!), ssrc: SSRC(ssrc), streamID: "PA_pub",
            trackID: trackID, cname: "sfu")
    }

    static func forward(_ trackID: String, to who: String) -> MediaCommand {
        .forward(room: room, trackID: trackID, subscriber: p(who), outgoing: outgoing(trackID))
    }

    static func stop(_ trackID: String, _ who: String) -> MediaCommand {
        .stopForward(room: room, trackID: trackID, subscriber: p(who))
    }

    /// A planner with `pub` publishing TR_1 on worker `publisherWorker`.
    static func withPublisher(workers: Int = 4, on publisherWorker: Int = 0) -> RoomSpanPlanner {
        var planner = RoomSpanPlanner(workers: workers)
        _ = planner.plan(open("pub", .publisher, on: publisherWorker))
        _ = planner.plan(publish("pub", "TR_1"))
        return planner
    }

    static func relayID(_ commands: [PlannedCommand]) -> RelayTrackID? {
        for c in commands { if case .addRelaySink(_, _, let relay, _) = c.command { return relay } }
        return nil
    }

    /// A mute goes to the track's source only: relays carry nothing it
    /// does not pass on. An unknown track's mute goes nowhere.
    @Test func aMuteGoesToTheTracksSourceWorkerOnly() {
        var planner = Self.withPublisher(on: 2)
        _ = planner.plan(Self.open("b", on: 1))
        _ = planner.plan(Self.forward("TR_1", to: "b"))
        let mute = MediaCommand.setTrackMuted(room: Self.room, participant: Self.p("pub"), trackID: "TR_1", muted: true)
        #expect(planner.plan(mute) == [PlannedCommand(worker: 2, .media(mute))])
        let unknown = MediaCommand.setTrackMuted(room: Self.room, participant: Self.p("pub"), trackID: "TR_9", muted: true)
        #expect(planner.plan(unknown).isEmpty)
    }

    @Test func aRoomOnOneWorkerGetsExactlyItsCommandsThereAndNoRelay() {
        var planner = RoomSpanPlanner(workers: 4)
        let opened = planner.plan(Self.open("pub", .publisher, on: 1))
        #expect(
            opened == [
                PlannedCommand(worker: 1, .media(Self.open("pub", .publisher, on: 1))),
                PlannedCommand(worker: 1, .setSpeakerReporter(room: Self.room, true)),
            ])
        let commands: [MediaCommand] = [
            Self.open("a", on: 1), Self.publish("pub", "TR_1"), Self.forward("TR_1", to: "a"),
            .setPreference(room: Self.room, trackID: "TR_1", subscriber: Self.p("a"), preference: ReceivePreference(maxLayer: 0)),
            Self.stop("TR_1", "a"), .removeIncomingTrack(room: Self.room, participant: Self.p("pub"), trackID: "TR_1"),
        ]
        for c in commands { #expect(planner.plan(c) == [PlannedCommand(worker: 1, .media(c))], "\(c)") }
        #expect(planner.relays(of: "TR_1", in: Self.room).isEmpty)
    }

    /// What a client's SDP says about its transport, as the rooms layer
    /// hands it over.
    static func remote() throws -> RemoteTransportParameters {
        let sdp = [
            "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0", "m=audio 9 UDP/TLS/RTP/SAVPF 111",
            "c=IN IP4 0.0.0.0", "a=mid:0", "a=ice-ufrag:someufrag", "a=ice-pwd:somepasswordsomepassword",
            "a=fingerprint:sha-256 " + Array(repeating: "00", count: 32).joined(separator: ":"), "a=setup:active", "a=rtcp-mux",
            "a=sendrecv", "a=rtpmap:111 opus/48000/2", "",
        ].joined(separator: "\r\n")
        return try RemoteTransportParameters(from: SessionDescription.parse(sdp), as: .answer)
    }

    @Test func theRemoteParametersGoToTheTransportsWorker() throws {
        var planner = RoomSpanPlanner(workers: 4)
        _ = planner.plan(Self.open("a", .subscriber, on: 3))
        _ = planner.plan(Self.open("b", .publisher, on: 1))
        let a = MediaCommand.setRemote(room: Self.room, participant: Self.p("a"), role: .subscriber, remote: try Self.remote())
        let b = MediaCommand.setRemote(room: Self.room, participant: Self.p("b"), role: .publisher, remote: try Self.remote())
        let nobody = MediaCommand.setRemote(
            room: Self.room, participant: Self.p("c"), role: .subscriber, remote: try Self.remote())
        #expect(planner.plan(a) == [PlannedCommand(worker: 3, .media(a))])
        #expect(planner.plan(b) == [PlannedCommand(worker: 1, .media(b))])
        #expect(planner.plan(nobody).isEmpty)
    }

    @Test func theWorkerIndexWrapsLikeTheRoomsLayersModulo() {
        var planner = RoomSpanPlanner(workers: 2)
        // Worker 1 opens only a command naming index 1.
        #expect(planner.plan(Self.open("a", on: 5)).first == PlannedCommand(worker: 1, .media(Self.open("a", on: 1))))
        #expect(planner.worker(of: Self.p("a"), role: .subscriber, in: Self.room) == 1)
    }

    @Test func aFarSubscriberGetsTheTrackRelayedOncePerWorker() throws {
        var planner = Self.withPublisher()
        for (who, w) in [("b1", 1), ("b2", 1), ("c", 2)] { _ = planner.plan(Self.open(who, on: w)) }
        let first = planner.plan(Self.forward("TR_1", to: "b1"))
        let relay = try #require(Self.relayID(first))
        #expect(
            first == [
                PlannedCommand(
                    worker: 1,
                    .addRelayedTrack(
                        room: Self.room, publisher: Self.p("pub"), trackID: "TR_1", description: Self.audio, relay: relay, from: 0
                    )),
                PlannedCommand(worker: 0, .addRelaySink(room: Self.room, trackID: "TR_1", relay: relay, to: 1)),
                PlannedCommand(worker: 1, .media(Self.forward("TR_1", to: "b1"))),
            ])
        // A second subscriber on the same worker: no second relay.
        #expect(
            planner.plan(Self.forward("TR_1", to: "b2")) == [PlannedCommand(worker: 1, .media(Self.forward("TR_1", to: "b2")))])
        let third = planner.plan(Self.forward("TR_1", to: "c"))
        let other = try #require(Self.relayID(third))
        #expect(other != relay, "each relay has its own id")
        #expect(third.map(\.worker) == [2, 0, 2])
        #expect(planner.relays(of: "TR_1", in: Self.room) == [1: 2, 2: 1])
        #expect(planner.sourceWorker(of: "TR_1", in: Self.room) == 0)
    }

    @Test func theRelayGoesWithItsLastFarSubscriber() {
        var planner = Self.withPublisher()
        for who in ["b1", "b2"] {
            _ = planner.plan(Self.open(who, on: 3))
            _ = planner.plan(Self.forward("TR_1", to: who))
        }
        #expect(planner.plan(Self.stop("TR_1", "b1")) == [PlannedCommand(worker: 3, .media(Self.stop("TR_1", "b1")))])
        #expect(
            planner.plan(Self.stop("TR_1", "b2")) == [
                PlannedCommand(worker: 3, .media(Self.stop("TR_1", "b2"))),
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: 3)),
                PlannedCommand(worker: 3, .removeRelayedTrack(room: Self.room, trackID: "TR_1")),
            ])
        #expect(planner.relays(of: "TR_1", in: Self.room).isEmpty)
        // Subscribing again opens a fresh relay.
        #expect(planner.plan(Self.forward("TR_1", to: "b1")).count == 3)
    }

    @Test func aPreferenceGoesToTheSubscribersWorker() {
        var planner = Self.withPublisher()
        _ = planner.plan(Self.open("b", on: 2))
        _ = planner.plan(Self.forward("TR_1", to: "b"))
        let c = MediaCommand.setPreference(
            room: Self.room, trackID: "TR_1", subscriber: Self.p("b"), preference: ReceivePreference(maxWidth: 320))
        #expect(planner.plan(c) == [PlannedCommand(worker: 2, .media(c))])
    }

    @Test func unpublishingTearsDownEveryRelayThenTheSource() {
        var planner = Self.withPublisher()
        for (who, w) in [("b", 1), ("c", 2), ("d", 0)] {
            _ = planner.plan(Self.open(who, on: w))
            _ = planner.plan(Self.forward("TR_1", to: who))
        }
        let c = MediaCommand.removeIncomingTrack(room: Self.room, participant: Self.p("pub"), trackID: "TR_1")
        #expect(
            planner.plan(c) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: 1)),
                PlannedCommand(worker: 1, .removeRelayedTrack(room: Self.room, trackID: "TR_1")),
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: 2)),
                PlannedCommand(worker: 2, .removeRelayedTrack(room: Self.room, trackID: "TR_1")),
                PlannedCommand(worker: 0, .media(c)),
            ])
        #expect(planner.sourceWorker(of: "TR_1", in: Self.room) == nil)
        // Its subscriptions went with it: a stop later finds no relay.
        #expect(planner.plan(Self.stop("TR_1", "b")) == [PlannedCommand(worker: 1, .media(Self.stop("TR_1", "b")))])
    }

    @Test func republishingATrackIDReplacesItsRelays() {
        var planner = Self.withPublisher()
        _ = planner.plan(Self.open("b", on: 1))
        _ = planner.plan(Self.forward("TR_1", to: "b"))
        let again = planner.plan(Self.publish("pub", "TR_1"))
        #expect(
            again == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: 1)),
                PlannedCommand(worker: 1, .removeRelayedTrack(room: Self.room, trackID: "TR_1")),
                PlannedCommand(worker: 0, .media(Self.publish("pub", "TR_1"))),
            ])
    }

    @Test func aLeavingPublisherEndsItsRelaysAndEveryWorkerOfTheRoomHearsIt() {
        var planner = Self.withPublisher()
        _ = planner.plan(Self.open("b", on: 1))
        _ = planner.plan(Self.open("c", .publisher, on: 2))
        _ = planner.plan(Self.forward("TR_1", to: "b"))
        let leave = MediaCommand.releaseParticipant(room: Self.room, participant: Self.p("pub"))
        let out = planner.plan(leave)
        #expect(
            Array(out.prefix(5)) == [
                PlannedCommand(worker: 0, .removeRelaySink(room: Self.room, trackID: "TR_1", to: 1)),
                PlannedCommand(worker: 1, .removeRelayedTrack(room: Self.room, trackID: "TR_1")),
                PlannedCommand(worker: 0, .media(leave)),
                PlannedCommand(worker: 1, .media(leave)),
                PlannedCommand(worker: 2, .media(leave)),
            ])
        #expect(planner.participantsPerWorker(in: Self.room) == [1: 1, 2: 1])
    }

    @Test func aLeavingFarSubscriberEndsTheRelaysOnlyItUsed() {
        var planner = Self.withPublisher()
        _ = planner.plan(Self.open("pub2", .publisher, on: 3))
        _ = planner.plan(Self.publish("pub2", "TR_2"))
        for who in ["b", "c"] { _ = planner.plan(Self.open(who, on: 1)) }
        _ = planner.plan(Self.forward("TR_1", to: "b"))
        _ = planner.plan(Self.forward("TR_1", to: "c"))
        _ = planner.plan(Self.forward("TR_2", to: "b"))
        let leave = MediaCommand.releaseParticipant(room: Self.room, participant: Self.p("b"))
        let out = planner.plan(leave)
        // TR_1 still has c on worker 1; TR_2's relay to 1 was b's alone.
        #expect(
            out.filter { if case .media = $0.command { false } else { true } }.prefix(2) == [
                PlannedCommand(worker: 3, .removeRelaySink(room: Self.room, trackID: "TR_2", to: 1)),
                PlannedCommand(worker: 1, .removeRelayedTrack(room: Self.room, trackID: "TR_2")),
            ])
        #expect(out.filter { $0.command == .media(leave) }.map(\.worker) == [0, 1, 3])
        #expect(planner.relays(of: "TR_1", in: Self.room) == [1: 1])
        #expect(planner.relays(of: "TR_2", in: Self.room).isEmpty)
    }

    @Test func aForwardWaitsForItsTrackAndKeepsItsPreference() {
        var planner = RoomSpanPlanner(workers: 4)
        _ = planner.plan(Self.open("pub", .publisher, on: 0))
        _ = planner.plan(Self.open("b", on: 1))
        #expect(planner.plan(Self.forward("TR_1", to: "b")).isEmpty)
        let preference = ReceivePreference(maxLayer: 1)
        #expect(
            planner.plan(.setPreference(room: Self.room, trackID: "TR_1", subscriber: Self.p("b"), preference: preference))
                .isEmpty)
        #expect(planner.pendingForwards(in: Self.room) == 1)
        let out = planner.plan(Self.publish("pub", "TR_1"))
        #expect(out.map(\.worker) == [0, 1, 0, 1, 1])
        #expect(out.first == PlannedCommand(worker: 0, .media(Self.publish("pub", "TR_1"))))
        #expect(
            out.last
                == PlannedCommand(
                    worker: 1,
                    .media(.setPreference(room: Self.room, trackID: "TR_1", subscriber: Self.p("b"), preference: preference))))
        #expect(planner.pendingForwards(in: Self.room) == 0)
    }

    @Test func aForwardWaitsForItsSubscribersTransportAndAStopCancelsIt() {
        var planner = Self.withPublisher()
        #expect(planner.plan(Self.forward("TR_1", to: "b")).isEmpty)
        let opened = planner.plan(Self.open("b", on: 0))
        #expect(opened.map(\.command) == [.media(Self.open("b", on: 0)), .media(Self.forward("TR_1", to: "b"))])
        #expect(planner.plan(Self.forward("TR_1", to: "late")).isEmpty)
        #expect(planner.plan(Self.stop("TR_1", "late")).isEmpty)
        #expect(planner.pendingForwards(in: Self.room) == 0)
        #expect(planner.plan(Self.open("late", on: 2)) == [PlannedCommand(worker: 2, .media(Self.open("late", on: 2)))])
    }

    @Test func commandsAboutUnknownParticipantsGoNowhere() {
        var planner = RoomSpanPlanner(workers: 2)
        #expect(planner.plan(Self.publish("ghost", "TR_9")).isEmpty)
        #expect(planner.plan(.releaseParticipant(room: Self.room, participant: Self.p("ghost"))).isEmpty)
        #expect(planner.plan(Self.stop("TR_9", "ghost")).isEmpty)
        #expect(planner.roomCount == 0)
    }

    @Test func withOneWorkerEverythingGoesThereKnownOrNot() {
        var planner = RoomSpanPlanner(workers: 1)
        let publish = Self.publish("pub", "TR_1")
        #expect(planner.plan(publish) == [PlannedCommand(worker: 0, .media(publish))], "before its transport, as before")
        let stop = Self.stop("TR_1", "nobody")
        #expect(planner.plan(stop) == [PlannedCommand(worker: 0, .media(stop))])
        let leave = MediaCommand.releaseParticipant(room: Self.room, participant: Self.p("nobody"))
        #expect(planner.plan(leave) == [PlannedCommand(worker: 0, .media(leave))])
    }

    @Test func theSpeakerReporterIsTheWorkerWithMostSubscribersAndMovesOnlyWhenBeaten() {
        var planner = RoomSpanPlanner(workers: 3)
        _ = planner.plan(Self.open("pub", .publisher, on: 0))
        #expect(planner.speakerReporter(of: Self.room) == 0)
        // A subscriber beats a publisher-only worker.
        #expect(
            planner.plan(Self.open("a", on: 2)) == [
                PlannedCommand(worker: 2, .media(Self.open("a", on: 2))),
                PlannedCommand(worker: 0, .setSpeakerReporter(room: Self.room, false)),
                PlannedCommand(worker: 2, .setSpeakerReporter(room: Self.room, true)),
            ])
        // A tie does not move it.
        #expect(planner.plan(Self.open("b", on: 1)).count == 1)
        #expect(planner.speakerReporter(of: Self.room) == 2)
        _ = planner.plan(Self.open("c", on: 1))
        #expect(planner.speakerReporter(of: Self.room) == 1)
        // The reporter's participants leave: the next best takes over.
        _ = planner.plan(.releaseParticipant(room: Self.room, participant: Self.p("b")))
        #expect(planner.speakerReporter(of: Self.room) == 1, "1 and 2 tie now: it stays")
        let out = planner.plan(.releaseParticipant(room: Self.room, participant: Self.p("c")))
        #expect(
            out.suffix(2) == [
                PlannedCommand(worker: 1, .setSpeakerReporter(room: Self.room, false)),
                PlannedCommand(worker: 2, .setSpeakerReporter(room: Self.room, true)),
            ])
        for who in ["a", "pub"] { _ = planner.plan(.releaseParticipant(room: Self.room, participant: Self.p(who))) }
        #expect(planner.roomCount == 0, "an empty room is forgotten")
    }
}
