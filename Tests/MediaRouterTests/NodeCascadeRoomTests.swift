import ICE
import MediaRouter
import Negotiation
import RTCP
import RTP
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire
import WorkerRelay

/// A room cascaded over nodes of two workers each (issue #15): each node's
/// `RoomSpanPlanner` turns the cascade's commands into worker commands,
/// run by that node's routers; rings join a node's workers and a
/// DTLS-SRTP relay joins the nodes' first workers
/// (`RouterTestbed(nodes:workersPerNode:)`). The publisher is on node 0's
/// worker 1, so every packet goes worker 1 → worker 0 (ring) → node 1's
/// worker 0 (node relay) → its worker 1 (ring).
@Suite struct NodeCascadeRoomTests {
    static let workers = 2
    /// The id node 0 gives its track on the relay to node 1.
    static let relay = RelayTrackID(42)

    struct Cascade {
        let bed: RouterTestbed
        var planners: [RoomSpanPlanner]
        let publisher: TestPeer
        /// On node 1: worker 0's subscriber, then worker 1's.
        let subscribers: [TestPeer]
        var stream = TestTrack.stream()
        var nextFrame: Instant
        var sent: [UInt16] = []

        /// Router of worker `w` of node `n`.
        static func router(node n: Int, worker w: Int) -> Int { n * workers + w }
        static func slot(of node: Int) -> Int { RouterTestbed.nodeSlot(of: node, workersPerNode: workers) }

        /// `subscribe`: which of node 1's subscribers (by worker) take the track.
        init(
            nodes: Int = 2, description: PublishedTrackDescription = TestTrack.description, subscribe: [Int] = [0, 1]
        ) throws {
            let bed = try RouterTestbed(nodes: nodes, workersPerNode: workers)
            self.bed = bed
            planners = (0..<nodes).map { _ in RoomSpanPlanner(workers: workers) }
            publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r", worker: Self.router(node: 0, worker: 1))
            subscribers = try (0..<workers).map { w in
                try bed.addPeer("PA_s\(w)", role: .subscriber, room: "r", worker: Self.router(node: 1, worker: w))
            }
            nextFrame = bed.clock.now
            #expect(bed.connect())
            // The planners learn of the transports the testbed opened.
            _ = planners[0].plan(Self.open("PA_pub", .publisher, on: 1))
            for w in 0..<workers { _ = planners[1].plan(Self.open("PA_s\(w)", .subscriber, on: w)) }

            plan(
                .addIncomingTrack(room: "r", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: description),
                on: 0)
            plan(.addRemoteSink(room: "r", trackID: "TR_v", node: "node-1", relay: NodeCascadeRoomTests.relay), on: 0, slot: 1)
            plan(
                .addRemoteTrack(
                    room: "r", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: description, node: "node-0",
                    relay: NodeCascadeRoomTests.relay), on: 1, slot: 0)
            for w in subscribe {
                plan(
                    .forward(
                        room: "r", trackID: "TR_v", subscriber: ParticipantID("PA_s\(w)"),
                        outgoing: TestTrack.outgoing(trackID: "TR_v", publisher: "PA_pub")), on: 1)
            }
        }

        static func open(_ who: String, _ role: TransportRole, on w: Int) -> MediaCommand {
            .openTransport(
                room: "r", worker: w, participant: ParticipantID(who), role: role, local: ICECredentials.random(), remote: nil)
        }

        /// Node `node`'s planner, then its workers, run `command`
        /// (`slot`: the node a cascade command names).
        mutating func plan(_ command: MediaCommand, on node: Int, slot: Int? = nil) {
            for planned in planners[node].plan(command, nodeSlot: slot.map(Self.slot(of:))) {
                bed.execute(planned.command, on: Self.router(node: node, worker: planned.worker))
            }
        }

        /// Streams 30 fps of one layer for `duration`.
        mutating func stream(for duration: Duration, each: (Instant) -> Void = { _ in }) {
            let end = bed.clock.now + duration
            while bed.clock.now < end {
                bed.run(for: .milliseconds(5), each: each)
                guard bed.clock.now >= nextFrame else { continue }
                nextFrame = nextFrame + stream.frameInterval
                for p in stream.nextFrame() {
                    sent.append(p.sequenceNumber)
                    bed.send(p.rtp, from: publisher)
                }
            }
        }
    }

    @Test func eachPacketCrossesTheNodeRelayOnceAndBothFarWorkersForwardTheSameStream() throws {
        var room = try Cascade()
        room.stream(for: .seconds(2))
        let bed = room.bed
        let n = UInt64(room.sent.count)
        #expect(n > 50)
        let streams = room.subscribers.map { RoomRouterRelayTests.received($0.rtp) }
        #expect(streams[0].count == room.sent.count)
        #expect(streams[1] == streams[0])
        // Ring on node 0, then the node relay once, then ring on node 1.
        #expect(bed.media[1][0]?.mediaCarried == room.sent.count)
        let out = try #require(bed.routers[0].nodeRelayTraffic["node-1"])
        let into = try #require(bed.routers[2].nodeRelayTraffic["node-0"])
        #expect(out.mediaPacketsOut == n && into.mediaPacketsIn == n)
        #expect(bed.media[2][3]?.mediaCarried == room.sent.count)
        #expect(bed.routers[3].counters.relayPacketsIn == n)
        #expect(bed.routers.allSatisfy { $0.counters.dropped.malformed == 0 && $0.counters.dropped.unknownRelay == 0 })
        #expect(bed.routers.allSatisfy { $0.counters.commandsIgnored == 0 })
    }

    @Test func aFarSubscribersPLIReachesThePublisherHopByHop() throws {
        var room = try Cascade()
        room.stream(for: .seconds(1))
        let media = SSRC(TestTrack.mediaSSRC)
        let before = room.publisher.pictureLossIndications(for: media)
        room.bed.send(
            RTCPBuilders.pictureLossIndication(sender: SSRC(1), media: TestTrack.outgoingSSRC), from: room.subscribers[1],
            rtcp: true)
        room.stream(for: .milliseconds(50))
        #expect(room.publisher.pictureLossIndications(for: media) == before + 1)
        // Node 1's ring, the node relay, node 0's ring: one request each.
        for r in [2, 0, 1] { #expect(room.bed.routers[r].counters.relayFeedbackReceived >= 1, "router \(r)") }
    }

    @Test func aPacketTheNodeRelayLostIsNACKedUpstreamHopByHopAndResentFromTheRelayWorker() throws {
        var room = try Cascade()
        room.stream(for: .milliseconds(500))
        let bed = room.bed
        var armed = true
        // Node 0's relay worker loses one datagram to node 1.
        room.stream(for: .milliseconds(100)) { _ in
            if armed {
                armed = false
                bed.dropRelayDatagrams[0] = 1
            }
        }
        let subscriber = room.subscribers[1]
        let seqs = RoomRouterRelayTests.received(subscriber.rtp).map(\.sequenceNumber)
        let gap = try #require(zip(seqs, seqs.dropFirst()).first { $1 &- $0 == 2 }).0 &+ 1
        room.bed.send(
            RTCPBuilders.nack(sender: SSRC(1), media: TestTrack.outgoingSSRC, lost: [gap]), from: subscriber, rtcp: true)
        room.stream(for: .milliseconds(50))
        // Node 1's worker 1 asks its relay worker, which lacks it too and
        // asks node 0, whose relay worker holds it.
        #expect(bed.routers[3].counters.relayNACKsSent == 1)
        #expect(bed.routers[2].counters.relayNACKsSent == 1)
        #expect(bed.routers[0].counters.relayRetransmissionsSent == 1)
        #expect(
            RoomRouterRelayTests.received(subscriber.rtp).contains {
                $0.ssrc == TestTrack.outgoingSSRC && $0.sequenceNumber == gap
            })
        // Neither node 0's source worker nor the publisher was asked.
        #expect(bed.routers[0].counters.relayNACKsSent == 0)
        #expect(room.publisher.nacks.isEmpty)
    }

    @Test func thePublishersSenderReportsReachTheFarWorker() throws {
        var room = try Cascade()
        room.stream(for: .milliseconds(300))
        let before = room.bed.media[2][3]?.senderReportsCarried.count ?? 0
        let info = SenderInfo(ntpTimestamp: 0xE000_0000_8000_0000, rtpTimestamp: 123_456, packetCount: 10, octetCount: 1000)
        room.bed.send(
            RTCPBuilders.senderReportWithCNAME(sender: SSRC(TestTrack.mediaSSRC), cname: "publisher", info: info),
            from: room.publisher, rtcp: true)
        room.stream(for: .milliseconds(20))
        let carried = room.bed.media[2][3]?.senderReportsCarried ?? []
        #expect(carried.count == before + 1)
        #expect(carried.last?.ntp == info.ntpTimestamp && carried.last?.rtpTimestamp == info.rtpTimestamp)
    }

    @Test func aFarWorkersLayerDemandReachesThePublishersDynacast() throws {
        let room = try Cascade(description: RoomRouterDynacastTests.description, subscribe: [1])
        let bed = room.bed
        var stream = SimulcastStream.threeLayers(temporalPattern: [0])
        var next = bed.clock.now
        func send(for duration: Duration) {
            RoomRouterDynacastTests.sendFrames(&stream, next: &next, from: room.publisher, on: bed, for: duration)
        }
        send(for: .seconds(1))
        let layers = { RoomRouterDynacastTests.layers(bed.events[1]) }
        #expect(layers().last == [true, true, true])
        var preference = ReceivePreference()
        preference.maxLayer = 0
        var planner = room.planners[1]
        for planned in planner.plan(
            .setPreference(room: "r", trackID: "TR_v", subscriber: ParticipantID("PA_s1"), preference: preference))
        {
            bed.execute(planned.command, on: Cascade.router(node: 1, worker: planned.worker))
        }
        // The switch down waits for a keyframe of layer 0 (one a second):
        // then only layer 0 stays on, three hops away (the subscriber may
        // not take the one above it).
        send(for: .milliseconds(1500))
        #expect(layers().last == [true, false, false])
        // Only the publisher's worker tells the publisher.
        for r in [0, 2, 3] { #expect(RoomRouterDynacastTests.layers(bed.events[r]).isEmpty, "router \(r)") }
    }

    @Test func aTrackFromANodeNeverGoesToAnotherNodeNorCrossesTwoRings() throws {
        var room = try Cascade(nodes: 3)
        let bed = room.bed
        // Node 1's relay worker holds node 0's track: not to node 2.
        let relayWorker = bed.routers[2].counters.commandsIgnored
        bed.execute(
            .addRelaySink(room: "r", trackID: "TR_v", relay: RelayTrackID(7), to: Cascade.slot(of: 2)),
            on: Cascade.router(node: 1, worker: 0))
        #expect(bed.routers[2].counters.commandsIgnored == relayWorker + 1)
        // A copy that came over a ring goes on to no other worker.
        let farWorker = bed.routers[3].counters.commandsIgnored
        bed.execute(.addRelaySink(room: "r", trackID: "TR_v", relay: RelayTrackID(8), to: 0), on: 3)
        #expect(bed.routers[3].counters.commandsIgnored == farWorker + 1)
        let sourceSide = bed.routers[0].counters.commandsIgnored
        bed.execute(.addRelaySink(room: "r", trackID: "TR_v", relay: RelayTrackID(9), to: 1), on: 0)
        #expect(bed.routers[0].counters.commandsIgnored == sourceSide + 1)
        // Node 1's planner refuses it before any worker sees it.
        let commands = room.planners[1].plan(
            .addRemoteSink(room: "r", trackID: "TR_v", node: "node-2", relay: RelayTrackID(10)), nodeSlot: Cascade.slot(of: 2))
        #expect(commands.isEmpty)
        #expect(room.planners[1].ignoredCommands == 1)

        room.stream(for: .milliseconds(500))
        #expect(room.sent.count > 10)
        #expect(bed.routers[2].nodeRelayTraffic["node-2"]?.mediaPacketsOut == 0)
        #expect(bed.routers[0].nodeRelayTraffic["node-2"]?.mediaPacketsOut == 0)
        #expect(RoomRouterRelayTests.received(room.subscribers[1].rtp).count == room.sent.count)
    }
}
