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

/// Rooms spanning workers, on a virtual clock with no socket: routers
/// driven directly, real DTLS-SRTP client peers, relay rings drained by
/// hand (`RouterTestbed`).
@Suite struct RoomRouterRelayTests {
    static let relay = RelayTrackID(7)

    /// The header fields and payload a subscriber decodes.
    struct Received: Equatable {
        var ssrc: SSRC
        var sequenceNumber: UInt16
        var timestamp: UInt32
        var payload: [UInt8]
    }

    static func received(_ packets: [[UInt8]]) -> [Received] {
        packets.compactMap { p in
            guard let h = try? RTPHeader(parsing: p.span.bytes) else { return nil }
            return Received(
                ssrc: h.ssrc, sequenceNumber: h.sequenceNumber, timestamp: h.timestamp, payload: Array(p[h.payloadRange]))
        }
    }

    /// A publisher on worker 0 of `workers`, its track relayed to every
    /// other worker, and `subscribers[w]` subscribers on worker w.
    struct Room {
        let bed: RouterTestbed
        let publisher: TestPeer
        let subscribers: [[TestPeer]]
        var stream = TestTrack.stream()
        var nextFrame: Instant
        /// The source sequence numbers the publisher sent, in order.
        var sent: [UInt16] = []

        init(
            workers: Int, subscribers counts: [Int], room: String = "r", tag: UInt8? = nil, overNodeRelays: Bool = false
        ) throws {
            let bed = try RouterTestbed(workers: workers, overNodeRelays: overNodeRelays)
            self.bed = bed
            publisher = try bed.addPeer("PA_pub", role: .publisher, room: room, worker: 0)
            var subscribers: [[TestPeer]] = []
            for w in 0..<workers {
                subscribers.append(
                    try (0..<counts[w]).map { i in try bed.addPeer("PA_s\(w)_\(i)", role: .subscriber, room: room, worker: w) })
            }
            self.subscribers = subscribers
            nextFrame = bed.clock.now
            #expect(bed.connect())
            bed.execute(
                .addIncomingTrack(
                    room: room, participant: ParticipantID("PA_pub"), trackID: "TR_v", description: TestTrack.description),
                on: 0)
            for w in 1..<workers where counts[w] > 0 {
                bed.execute(
                    .addRelayedTrack(
                        room: room, publisher: ParticipantID("PA_pub"), trackID: "TR_v", description: TestTrack.description,
                        relay: RoomRouterRelayTests.relay, from: 0), on: w)
                bed.execute(.addRelaySink(room: room, trackID: "TR_v", relay: RoomRouterRelayTests.relay, to: w), on: 0)
            }
            for w in 0..<workers {
                for i in 0..<counts[w] {
                    bed.execute(
                        .forward(
                            room: room, trackID: "TR_v", subscriber: ParticipantID("PA_s\(w)_\(i)"),
                            outgoing: TestTrack.outgoing(trackID: "TR_v", publisher: "PA_pub")), on: w)
                }
            }
        }

        /// Streams 30 fps for `duration`; `before` runs before each packet.
        mutating func stream(for duration: Duration, before: (UInt16) -> Void = { _ in }) {
            let end = bed.clock.now + duration
            while bed.clock.now < end {
                bed.run(for: .milliseconds(5))
                guard bed.clock.now >= nextFrame else { continue }
                nextFrame = nextFrame + stream.frameInterval
                for p in stream.nextFrame() {
                    before(p.sequenceNumber)
                    sent.append(p.sequenceNumber)
                    bed.send(p.rtp, from: publisher)
                }
            }
        }
    }

    @Test func farWorkersForwardTheSameStreamAsTheSourceWorker() throws {
        var room = try Room(workers: 3, subscribers: [1, 1, 1])
        room.stream(for: .seconds(2))
        let streams = room.subscribers.map { Self.received($0[0].rtp) }
        #expect(room.sent.count > 100)
        // The subscriber on the source worker is forwarded as in a room
        // on one worker; the far ones get exactly its stream.
        #expect(streams[0].count == room.sent.count)
        #expect(streams[0].allSatisfy { $0.ssrc == TestTrack.outgoingSSRC })
        #expect(streams[1] == streams[0])
        #expect(streams[2] == streams[0])
        for w in 1...2 {
            #expect(room.bed.routers[w].counters.relayPacketsIn == UInt64(room.sent.count))
            #expect(room.bed.routers[w].counters.forwarded == UInt64(room.sent.count))
        }
        #expect(room.bed.routers[0].counters.relayPacketsOut == UInt64(2 * room.sent.count))
        #expect(room.bed.routers[0].counters.relayDrops == 0)
    }

    @Test func aRelayCarriesEachPacketOnceWhateverTheFarSubscriberCount() throws {
        var room = try Room(workers: 2, subscribers: [0, 3])
        room.stream(for: .seconds(1))
        #expect(room.bed.media[0][1]?.mediaCarried == room.sent.count)
        #expect(room.bed.routers[0].counters.relayPacketsOut == UInt64(room.sent.count))
        #expect(room.bed.routers[1].counters.forwarded == UInt64(3 * room.sent.count))
        for s in room.subscribers[1] { #expect(s.rtp.count == room.sent.count) }
        // Nothing went to a transport on the source worker.
        #expect(room.bed.routers[0].counters.forwarded == 0)
    }

    @Test func farPLIsReachThePublisherOncePerThrottleWindow() throws {
        var room = try Room(workers: 3, subscribers: [1, 1, 1])
        room.stream(for: .seconds(1))
        let media = SSRC(TestTrack.mediaSSRC)
        let before = room.publisher.pictureLossIndications(for: media)
        let pli = RTCPBuilders.pictureLossIndication(sender: SSRC(1), media: TestTrack.outgoingSSRC)
        // Six PLIs from two far workers and one local within 300 ms (the
        // window is 500 ms): one reaches the publisher.
        for _ in 0..<3 {
            room.bed.send(pli, from: room.subscribers[1][0], rtcp: true)
            room.bed.send(pli, from: room.subscribers[2][0], rtcp: true)
            room.stream(for: .milliseconds(100))
        }
        room.bed.send(pli, from: room.subscribers[0][0], rtcp: true)
        #expect(room.publisher.pictureLossIndications(for: media) == before + 1)
        #expect(room.bed.feedback[1][0]?.feedbackCarried.contains(.keyframeRequest(Self.relay, layer: 0)) == true)
        // Each far track throttles its own subscribers' requests too.
        #expect(room.bed.routers[1].counters.keyframeRequestsSuppressed >= 2)
        // The next window lets one more through.
        room.stream(for: .milliseconds(600))
        room.bed.send(pli, from: room.subscribers[2][0], rtcp: true)
        #expect(room.publisher.pictureLossIndications(for: media) == before + 2)
    }

    @Test func aFarNACKIsAnsweredFromTheFarHistoryWhenItHoldsThePacket() throws {
        var room = try Room(workers: 2, subscribers: [0, 1])
        room.stream(for: .milliseconds(500))
        let subscriber = room.subscribers[1][0]
        let got = Self.received(subscriber.rtp)
        let asked = got[got.count - 5].sequenceNumber
        room.bed.send(
            RTCPBuilders.nack(sender: SSRC(1), media: TestTrack.outgoingSSRC, lost: [asked]), from: subscriber, rtcp: true)
        room.stream(for: .milliseconds(100))
        #expect(room.bed.routers[1].counters.retransmissionsSent == 1)
        #expect(Self.received(subscriber.rtp).contains { $0.ssrc == TestTrack.outgoingRTXSSRC })
        // Nothing went upstream: no NACK feedback, no resend, and the
        // publisher saw no NACK.
        #expect(room.bed.routers[1].counters.relayNACKsSent == 0)
        #expect(room.bed.routers[0].counters.relayRetransmissionsSent == 0)
        #expect(room.publisher.nacks.isEmpty)
    }

    @Test func aFarNACKForAPacketTheRelayDroppedGoesUpstream() throws {
        var room = try Room(workers: 2, subscribers: [0, 1])
        room.stream(for: .milliseconds(500))
        // The ring is full for one packet: the far side never gets it.
        let ring = try #require(room.bed.media[0][1])
        var dropped: UInt16?
        var armed = true
        room.stream(for: .milliseconds(100)) { n in
            if armed {
                armed = false
                dropped = n
                ring.refuseNext = 1
            }
        }
        #expect(room.bed.routers[0].counters.relayDrops == 1)
        let subscriber = room.subscribers[1][0]
        let seqs = Self.received(subscriber.rtp).map(\.sequenceNumber)
        let gap = try #require(zip(seqs, seqs.dropFirst()).first { $1 &- $0 == 2 }).0 &+ 1
        room.bed.send(
            RTCPBuilders.nack(sender: SSRC(1), media: TestTrack.outgoingSSRC, lost: [gap]), from: subscriber, rtcp: true)
        #expect(room.bed.routers[1].counters.relayNACKsSent == 1)
        let source = try #require(dropped)
        #expect(
            room.bed.feedback[1][0]?.feedbackCarried.contains(.nack(Self.relay, layer: 0, packetID: source, lostBitmask: 0))
                == true)
        // The source resent it from its own buffer; the far side forwarded
        // it, late, under the number it kept free. The publisher was not
        // asked.
        #expect(room.bed.routers[0].counters.relayRetransmissionsSent == 1)
        #expect(Self.received(subscriber.rtp).contains { $0.ssrc == TestTrack.outgoingSSRC && $0.sequenceNumber == gap })
        #expect(room.publisher.nacks.isEmpty)
    }

    @Test func twoFarSubscribersNACKingOneRelayLossAskUpstreamOnce() throws {
        var room = try Room(workers: 2, subscribers: [0, 2])
        room.stream(for: .milliseconds(500))
        let ring = try #require(room.bed.media[0][1])
        var armed = true
        room.stream(for: .milliseconds(100)) { _ in
            if armed {
                armed = false
                ring.refuseNext = 1
            }
        }
        #expect(room.bed.routers[0].counters.relayDrops == 1)
        func gap(of subscriber: TestPeer) throws -> UInt16 {
            let seqs = Self.received(subscriber.rtp).filter { $0.ssrc == TestTrack.outgoingSSRC }.map(\.sequenceNumber)
            return try #require(zip(seqs, seqs.dropFirst()).first { $1 &- $0 == 2 }).0 &+ 1
        }
        let far = room.subscribers[1]
        // Both NACKs reach the far worker before the resend does.
        for (i, subscriber) in far.enumerated() {
            room.bed.send(
                RTCPBuilders.nack(sender: SSRC(1), media: TestTrack.outgoingSSRC, lost: [try gap(of: subscriber)]),
                from: subscriber, rtcp: true, pump: i == far.count - 1)
        }
        // One NACK upstream, one resend across the relay, and both far
        // subscribers got the packet.
        #expect(room.bed.routers[1].counters.relayNACKsSent == 1)
        #expect(room.bed.routers[1].counters.relayNACKsSuppressed == 1)
        #expect(room.bed.routers[0].counters.relayRetransmissionsSent == 1)
        for subscriber in far {
            let got = Self.received(subscriber.rtp).filter { $0.ssrc == TestTrack.outgoingSSRC }.map(\.sequenceNumber)
            #expect(Set(got).count == got.count, "each far subscriber got the resent packet once")
        }
    }

    @Test func thePublishersSenderReportsCrossEachRelayOnce() throws {
        var room = try Room(workers: 3, subscribers: [0, 1, 2])
        room.stream(for: .milliseconds(300))
        let info = SenderInfo(ntpTimestamp: 0xE000_0000_8000_0000, rtpTimestamp: 123_456, packetCount: 10, octetCount: 1000)
        room.bed.send(
            RTCPBuilders.senderReportWithCNAME(sender: SSRC(TestTrack.mediaSSRC), cname: "publisher", info: info),
            from: room.publisher, rtcp: true)
        for w in 1...2 {
            let reports = try #require(room.bed.media[0][w]?.senderReportsCarried)
            #expect(reports.count == 1)
            #expect(reports.first?.layer == 0)
            #expect(reports.first?.ntp == info.ntpTimestamp)
            #expect(reports.first?.rtpTimestamp == info.rtpTimestamp)
        }
    }

    @Test func collidingSSRCsInTwoRoomsOnTwoWorkersStayApart() throws {
        // Rooms a and b: same track id, same SSRCs; a's publisher on
        // worker 0, b's on worker 1; each relayed to the other worker.
        let bed = try RouterTestbed(workers: 2)
        let publishers = [
            try bed.addPeer("PA_pub", role: .publisher, room: "a", worker: 0),
            try bed.addPeer("PB_pub", role: .publisher, room: "b", worker: 1),
        ]
        let rooms = ["a", "b"]
        var subscribers: [[TestPeer]] = [[], []]
        for r in 0..<2 {
            for w in 0..<2 {
                subscribers[r].append(try bed.addPeer("P\(rooms[r])_s\(w)", role: .subscriber, room: rooms[r], worker: w))
            }
        }
        #expect(bed.connect())
        for r in 0..<2 {
            let source = r
            let far = 1 - r
            let publisher = ParticipantID(r == 0 ? "PA_pub" : "PB_pub")
            let relay = RelayTrackID(UInt32(r + 1))
            bed.execute(
                .addIncomingTrack(room: rooms[r], participant: publisher, trackID: "TR_v", description: TestTrack.description),
                on: source)
            bed.execute(
                .addRelayedTrack(
                    room: rooms[r], publisher: publisher, trackID: "TR_v", description: TestTrack.description, relay: relay,
                    from: source), on: far)
            bed.execute(.addRelaySink(room: rooms[r], trackID: "TR_v", relay: relay, to: far), on: source)
            for w in 0..<2 {
                bed.execute(
                    .forward(
                        room: rooms[r], trackID: "TR_v", subscriber: ParticipantID("P\(rooms[r])_s\(w)"),
                        outgoing: TestTrack.outgoing(trackID: "TR_v", publisher: publisher.rawValue)), on: w)
            }
        }
        var streams = [TestTrack.stream(), TestTrack.stream()]
        var next = bed.clock.now
        var sent = 0
        let tags: [UInt8] = [0xA1, 0xB2]
        let end = bed.clock.now + .seconds(1)
        while bed.clock.now < end {
            bed.run(for: .milliseconds(5))
            guard bed.clock.now >= next else { continue }
            next = next + streams[0].frameInterval
            for r in 0..<2 {
                for p in streams[r].nextFrame() {
                    var packet = p
                    packet.payload.append(tags[r])
                    bed.send(packet.rtp, from: publishers[r])
                    if r == 0 { sent += 1 }
                }
            }
        }
        for r in 0..<2 {
            for s in subscribers[r] {
                let got = Self.received(s.rtp)
                #expect(got.count == sent)
                #expect(got.allSatisfy { $0.payload.last == tags[r] })
            }
        }
    }

    @Test func removingTheRelayedTrackOrItsPublisherCleansUpBothSides() throws {
        var room = try Room(workers: 3, subscribers: [0, 1, 1])
        room.stream(for: .milliseconds(300))
        #expect(room.bed.routers[0].stateSizes.relaySinks == 2)
        #expect(room.bed.routers[1].stateSizes.relayedTracks == 1)
        room.bed.execute(.removeRelayedTrack(room: "r", trackID: "TR_v"), on: 1)
        room.bed.execute(.removeRelaySink(room: "r", trackID: "TR_v", to: 1), on: 0)
        #expect(room.bed.routers[1].stateSizes == RoomMediaStateSizes(transports: 1, subscriberLinks: 1))
        #expect(room.bed.routers[0].stateSizes.relaySinks == 1)
        // The publisher leaves: its track goes on the source and on the
        // far worker that still holds it.
        room.bed.execute(.releaseParticipant(room: "r", participant: ParticipantID("PA_pub")), on: 0)
        room.bed.execute(.releaseParticipant(room: "r", participant: ParticipantID("PA_pub")), on: 2)
        #expect(room.bed.routers[0].stateSizes.tracks == 0)
        #expect(room.bed.routers[0].stateSizes.relaySinks == 0)
        #expect(room.bed.routers[2].stateSizes.tracks == 0)
        #expect(room.bed.routers[2].stateSizes.relayedTracks == 0)
        #expect(room.bed.routers[2].stateSizes.subscriptions == 0)
        // Packets still in a ring for a relay that is gone are counted.
        room.bed.routers[2].receiveRelayedMedia(
            Self.relay, layer: 0, isRetransmission: false, packet: UnsafeRawBufferPointer(start: nil, count: 0), from: 0,
            now: room.bed.clock.now, output: room.bed.outputs[2])
        #expect(room.bed.routers[2].counters.dropped.unknownRelay == 1)
    }
}
