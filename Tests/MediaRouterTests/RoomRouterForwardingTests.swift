import MediaRouter
import Negotiation
import RTCP
import RTP
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire

/// One worker's forwarding on a virtual clock (`RouterTestbed`): the
/// router driven directly, real DTLS-SRTP client peers, no socket. Time
/// moves only when a test says, and every datagram in flight is delivered
/// before the next step, so "nothing was sent" and "at most one per
/// 500 ms" are exact counts, not waits that pass when the server is slow.
@Suite struct RoomRouterForwardingTests {
    static func opusPacket(_ n: Int, ssrc: UInt32, marker byte: UInt8 = 0x5A) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(1000 + n), timestamp: UInt32(48_000 + 960 * n), ssrc: ssrc,
            payload: [0xF8, byte, UInt8(truncatingIfNeeded: n)])
    }

    static func payload(_ packet: [UInt8]) -> [UInt8] {
        guard let h = try? RTPHeader(parsing: packet.span.bytes) else { return [] }
        return Array(packet[h.payloadRange])
    }

    /// A publisher with an Opus track (SSRC 0xA0A0) in room r1 and
    /// `subscribers` each forwarded it with outgoing SSRC 0x5500 + index,
    /// all connected.
    static func opusRoom(
        subscribers: Int, configure: (inout RoomRouterConfiguration) -> Void = { _ in }
    ) throws -> (RouterTestbed, TestPeer, [TestPeer]) {
        let bed = try RouterTestbed(workers: 1, configure: configure)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r1", worker: 0)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a",
                description: TestTrack.opusDescription(ssrc: 0xA0A0)), on: 0)
        var subs: [TestPeer] = []
        for i in 0..<subscribers {
            subs.append(try bed.addPeer("PA_sub\(i)", role: .subscriber, room: "r1", worker: 0))
            bed.execute(
                .forward(
                    room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub\(i)"),
                    outgoing: TestTrack.outgoing(
                        .opus(payloadType: TestTrack.opus), kind: .audio, ssrc: 0x5500 + UInt32(i), trackID: "TR_a")), on: 0)
        }
        #expect(bed.connect())
        return (bed, publisher, subs)
    }

    /// Sends Opus packets `range` from `publisher`, 20 ms apart.
    static func sendOpus(_ range: Range<Int>, from publisher: TestPeer, on bed: RouterTestbed) {
        for n in range {
            bed.send(opusPacket(n, ssrc: 0xA0A0), from: publisher)
            bed.run(for: .milliseconds(20))
        }
    }

    @Test func forwardsOpusToSubscriberWithOutgoingSSRCAndContiguousSequence() throws {
        let (bed, publisher, subs) = try Self.opusRoom(subscribers: 1)
        let packets = (0..<50).map { Self.opusPacket($0, ssrc: 0xA0A0) }
        Self.sendOpus(0..<50, from: publisher, on: bed)

        let received = subs[0].rtp
        #expect(received.count == 50)
        let headers = subs[0].rtpHeaders
        #expect(headers.allSatisfy { $0.ssrc == SSRC(0x5500) && $0.payloadType == TestTrack.opus })
        // The rewriter keeps the first source's numbers.
        #expect(headers.map(\.sequenceNumber) == (0..<50).map { UInt16(1000 + $0) })
        #expect(headers.map(\.timestamp) == (0..<50).map { UInt32(48_000 + 960 * $0) })
        #expect(received.map(Self.payload) == packets.map(Self.payload))
        // Nothing goes back to the publisher as media.
        #expect(publisher.rtp.isEmpty)
        let counters = bed.routers[0].counters
        #expect(counters.forwarded == 50)
        #expect(counters.rtpPacketsIn == 50)
        #expect(counters.rtpPacketsOut == 50)
    }

    @Test func stopForwardEndsOnlyThatSubscription() throws {
        let (bed, publisher, subs) = try Self.opusRoom(subscribers: 2)
        Self.sendOpus(0..<20, from: publisher, on: bed)
        #expect(subs.map(\.rtp.count) == [20, 20])

        bed.execute(.stopForward(room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub1")), on: 0)
        #expect(bed.routers[0].stateSizes.subscriptions == 1)
        Self.sendOpus(20..<40, from: publisher, on: bed)
        // A second on, still not one more packet for the stopped one.
        bed.run(for: .seconds(1))
        #expect(subs.map(\.rtp.count) == [40, 20])
        #expect(subs[0].rtpHeaders.map(\.sequenceNumber) == (0..<40).map { UInt16(1000 + $0) })
        #expect(bed.routers[0].counters.forwarded == 60)

        // Pausing (maxWidth 0) holds back; releasing the publisher ends the rest.
        bed.execute(
            .setPreference(
                room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub0"), preference: ReceivePreference(maxWidth: 0)),
            on: 0)
        Self.sendOpus(40..<45, from: publisher, on: bed)
        bed.run(for: .milliseconds(500))
        #expect(subs[0].rtp.count == 40)
        #expect(bed.routers[0].counters.filtered.paused == 5)
        bed.execute(.releaseParticipant(room: "r1", participant: ParticipantID("PA_pub")), on: 0)
        let sizes = bed.routers[0].stateSizes
        #expect([sizes.tracks, sizes.subscriptions, sizes.transports] == [0, 0, 2])
    }

    @Test func startsAMidRIDSimulcastSubscriptionOnTheTopLayersKeyframe() throws {
        let bed = try RouterTestbed(workers: 1)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r1", worker: 0)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v",
                description: TestTrack.vp8Description(rids: ["q", "h", "f"])), on: 0)
        let subscriber = try bed.addPeer("PA_sub", role: .subscriber, room: "r1", worker: 0)
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"),
                outgoing: TestTrack.outgoing(
                    .vp8(payloadType: TestTrack.vp8, rtxPayloadType: TestTrack.rtx), kind: .video, ssrc: 0x7700,
                    trackID: "TR_v")), on: 0)
        #expect(bed.connect())

        // Three layers on three unsignalled SSRCs; the first 5 packets of
        // each carry mid ("1", id 4) and rid (id 10), the rest none, as
        // browsers do once the SSRC is known. All at one instant: no
        // allocation round runs in between.
        let layers: [(rid: String, ssrc: UInt32, tag: UInt8)] = [("q", 0x100, 0x01), ("h", 0x200, 0x02), ("f", 0x300, 0x03)]
        for n in 0..<30 {
            for layer in layers {
                let mid: [UInt8] = Array("1".utf8)
                let rid: [UInt8] = Array(layer.rid.utf8)
                let extensions: [(UInt8, [UInt8])] = n < 5 ? [(UInt8(4), mid), (UInt8(10), rid)] : []
                let vp8 = RTPBuilders.vp8Payload(pictureID: UInt16(100 + n), keyframe: n == 0)
                bed.send(
                    RTPBuilders.packet(
                        payloadType: 96, sequenceNumber: UInt16(n) &+ UInt16(layer.ssrc), timestamp: UInt32(3000 * n),
                        ssrc: layer.ssrc, extensions: extensions, payload: vp8 + [layer.tag, UInt8(n)]), from: publisher)
            }
        }
        // An RTX packet (PT 97) of the top layer, with mid and repaired rid.
        bed.send(
            RTPBuilders.packet(
                payloadType: 97, sequenceNumber: 1, ssrc: 0x301, extensions: [(4, Array("1".utf8)), (11, Array("f".utf8))],
                payload: [0x00, 0x05, 0xAA]), from: publisher)
        bed.run(for: .milliseconds(100))

        // Before any allocation a subscription wants the top layer; each
        // layer's first packet is a keyframe, so it starts on f's and
        // forwards f only.
        let received = subscriber.rtp
        #expect(received.count == 30)
        let headers = subscriber.rtpHeaders
        #expect(headers.allSatisfy { $0.ssrc == SSRC(0x7700) && $0.payloadType == TestTrack.vp8 })
        #expect(headers.map(\.sequenceNumber) == (0..<30).map { UInt16($0) &+ 0x300 })
        // The layer tag and packet index at the end of each payload.
        #expect(received.map { Array(Self.payload($0).suffix(2)) } == (0..<30).map { [0x03, UInt8($0)] })
        // The publisher's mid/rid extensions (its ids, not the subscriber's)
        // are replaced on egress by ours: transport-wide sequence numbers
        // (id 3) counting up from 1, and abs-send-time (id 2).
        for (i, packet) in received.enumerated() {
            let h = headers[i]
            let twccRange = h.extensionValueRange(id: 3, in: packet.span.bytes)
            let twcc = try #require(twccRange)
            #expect(Array(packet[twcc]) == [0, UInt8(i + 1)])
            let sendTime = h.extensionValueRange(id: 2, in: packet.span.bytes)
            let mid = h.extensionValueRange(id: 4, in: packet.span.bytes)
            let rid = h.extensionValueRange(id: 10, in: packet.span.bytes)
            #expect(sendTime?.count == 3)
            #expect(mid == nil)
            #expect(rid == nil)
        }
        let counters = bed.routers[0].counters
        #expect(counters.filtered.otherLayer + counters.dropped.waitingForKeyframe == 60)
        #expect(counters.dropped.retransmission == 1)
        #expect(counters.forwarded == 30)
    }

    /// One VP8 track (SSRC 0xB0B0) in room r1 forwarded to one subscriber
    /// as SSRC 0x7700 (no RTX), both connected.
    static func vp8Room(
        configure: (inout RoomRouterConfiguration) -> Void = { _ in }
    ) throws -> (RouterTestbed, TestPeer, TestPeer) {
        let bed = try RouterTestbed(workers: 1, configure: configure)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r1", worker: 0)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v",
                description: TestTrack.vp8Description(ssrc: 0xB0B0)), on: 0)
        let subscriber = try bed.addPeer("PA_sub", role: .subscriber, room: "r1", worker: 0)
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"),
                outgoing: TestTrack.outgoing(.vp8(payloadType: TestTrack.vp8), kind: .video, ssrc: 0x7700, trackID: "TR_v")),
            on: 0)
        #expect(bed.connect())
        return (bed, publisher, subscriber)
    }

    @Test func aSubscriptionThatMissedTheKeyframeAsksThePublisherForOne() throws {
        let (bed, publisher, subscriber) = try Self.vp8Room()
        func send(_ n: Int, keyframe: Bool) {
            bed.send(
                RTPBuilders.packet(
                    payloadType: 96, sequenceNumber: UInt16(n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
                    payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: keyframe)), from: publisher)
        }
        #expect(publisher.pictureLossIndications(for: SSRC(0xB0B0)) == 0)
        // Delta frames only (the keyframe went out before the subscriber
        // was there), 33 ms apart for 330 ms: nothing can be forwarded, and
        // the publisher is asked for a keyframe, naming its own SSRC,
        // without any PLI from the subscriber; once, inside the 500 ms
        // window.
        for n in 0..<10 {
            send(n, keyframe: false)
            bed.run(for: .milliseconds(33))
        }
        #expect(publisher.pictureLossIndications(for: SSRC(0xB0B0)) == 1)
        #expect(
            publisher.rtcp.allSatisfy { if case .pictureLossIndication(let p) = $0 { p.mediaSSRC == SSRC(0xB0B0) } else { true } }
        )
        #expect(subscriber.rtp.isEmpty)
        #expect(bed.routers[0].counters.dropped.waitingForKeyframe == 10)
        // The keyframe comes: forwarding starts there.
        send(10, keyframe: true)
        send(11, keyframe: false)
        bed.run(for: .milliseconds(100))
        #expect(subscriber.rtpHeaders.map(\.sequenceNumber) == [10, 11])
    }

    @Test func keyframeRequestsReachThePublisherAtMostEvery500Milliseconds() throws {
        let (bed, publisher, subscriber) = try Self.vp8Room()
        // A storm: a PLI every 5 ms for 1.2 s.
        let pli = RTCPBuilders.pictureLossIndication(sender: SSRC(0xC1), media: SSRC(0x7700))
        let start = bed.clock.now
        var sent = 0
        bed.run(for: .milliseconds(1200)) { _ in
            bed.send(pli, from: subscriber, rtcp: true)
            sent += 1
        }
        bed.run(for: .milliseconds(100))
        #expect(sent == 240)

        // Exactly at 5, 505 and 1005 ms into the storm: the first PLI, then
        // the first one each window lets through.
        let times = publisher.pictureLossIndicationTimes(for: SSRC(0xB0B0))
        #expect(times.map { $0 - start } == [.milliseconds(5), .milliseconds(505), .milliseconds(1005)])
        #expect(
            publisher.rtcp.allSatisfy { if case .pictureLossIndication(let p) = $0 { p.mediaSSRC == SSRC(0xB0B0) } else { true } }
        )
        let counters = bed.routers[0].counters
        #expect(counters.plisForwarded == 3)
        // Every PLI of the storm met the throttle; so did the forwarder's
        // own requests while it waits for a first keyframe.
        #expect(counters.plisForwarded + counters.keyframeRequestsSuppressed >= UInt64(sent))
    }

    @Test func roomsOnOneWorkerStayApartEvenWithTheSameSSRCAndTrackID() throws {
        let bed = try RouterTestbed(workers: 1)
        var publishers: [TestPeer] = []
        var subscribers: [TestPeer] = []
        for (room, ssrc) in [("r1", UInt32(0xAAAA)), ("r2", 0xBBBB)] {
            let publisher = "PA_pub_\(room)"
            publishers.append(try bed.addPeer(publisher, role: .publisher, room: room, worker: 0))
            bed.execute(
                .addIncomingTrack(
                    room: room, participant: ParticipantID(publisher), trackID: "TR_x",
                    description: TestTrack.opusDescription(ssrc: 0x1111)), on: 0)
            subscribers.append(try bed.addPeer("PA_sub_\(room)", role: .subscriber, room: room, worker: 0))
            bed.execute(
                .forward(
                    room: room, trackID: "TR_x", subscriber: ParticipantID("PA_sub_\(room)"),
                    outgoing: TestTrack.outgoing(
                        .opus(payloadType: TestTrack.opus), kind: .audio, ssrc: ssrc, trackID: "TR_x", publisher: publisher)),
                on: 0)
        }
        #expect(bed.connect())
        for n in 0..<20 {
            bed.send(Self.opusPacket(n, ssrc: 0x1111, marker: 0xA1), from: publishers[0])
            bed.send(Self.opusPacket(n, ssrc: 0x1111, marker: 0xB2), from: publishers[1])
            bed.run(for: .milliseconds(20))
        }
        #expect(subscribers.map(\.rtp.count) == [20, 20])
        #expect(subscribers[0].rtpHeaders.allSatisfy { $0.ssrc == SSRC(0xAAAA) })
        #expect(subscribers[1].rtpHeaders.allSatisfy { $0.ssrc == SSRC(0xBBBB) })
        #expect(subscribers[0].rtp.map { Self.payload($0)[1] } == Array(repeating: 0xA1, count: 20))
        #expect(subscribers[1].rtp.map { Self.payload($0)[1] } == Array(repeating: 0xB2, count: 20))
    }

    @Test func sendsSenderReportsToSubscribersAndReceiverReportsToPublishers() throws {
        let (bed, publisher, subs) = try Self.opusRoom(subscribers: 1) { $0.reportInterval = .milliseconds(200) }
        let subscriber = subs[0]
        for n in 0..<10 { bed.send(Self.opusPacket(n, ssrc: 0xA0A0), from: publisher) }
        let info = SenderInfo(ntpTimestamp: 0x1234_5678_9ABC_DEF0, rtpTimestamp: 48_000, packetCount: 10, octetCount: 30)
        bed.send(
            RTCPBuilders.senderReportWithCNAME(sender: SSRC(0xA0A0), cname: "publisher", info: info), from: publisher,
            rtcp: true)
        let start = bed.clock.now
        bed.run(for: .seconds(2))

        let reports = subscriber.senderReports
        let sr = try #require(reports.first?.report)
        #expect(sr.ssrc == SSRC(0x5500))
        #expect(sr.senderInfo.ntpTimestamp == RouterTestbed.wallClock.rawValue)
        #expect(sr.senderInfo.packetCount == 10)
        #expect(sr.senderInfo.octetCount == 30)
        // RFC 3550 section 6.3.1: intervals spread over [0.5, 1.5] of the
        // 200 ms, so 2 s hold between 6 and 20 of them.
        #expect((6...20).contains(reports.count), "\(reports.count) SRs")
        for (a, b) in zip([start] + reports.map(\.at), reports.map(\.at)) {
            #expect(b - a <= .milliseconds(300))
        }
        let block = try #require(publisher.receiverReportBlocks.last)
        #expect(block.ssrc == SSRC(0xA0A0))
        #expect(block.extendedHighestSequenceNumber == 1009)
        #expect(block.cumulativeLost == 0)
        #expect(block.lastSenderReport == 0x5678_9ABC)
    }
}
