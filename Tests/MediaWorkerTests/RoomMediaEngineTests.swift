import Foundation
import MediaWorker
import Negotiation
import NetIO
import RTCP
import RTP
import Rooms
import SFUTesting
import Testing
import Wire

/// The worker's media half over real UDP on 127.0.0.1: a `UDPWorker`
/// hosting a `RoomMediaEngine`, driven by `MediaCommand`s as the rooms
/// layer emits them, and client transports on their own sockets.
@Suite(.serialized) struct RoomMediaEngineTests {
    private func header(_ bytes: [UInt8]) throws -> RTPHeader { try RTPHeader(parsing: bytes.span.bytes) }

    private func payload(_ bytes: [UInt8]) throws -> [UInt8] { Array(bytes[try header(bytes).payloadRange]) }

    private func opusPacket(_ n: Int, ssrc: UInt32, marker byte: UInt8 = 0x5A) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(1000 + n), timestamp: UInt32(48_000 + 960 * n), ssrc: ssrc,
            payload: [0xF8, byte, UInt8(truncatingIfNeeded: n)])
    }

    /// Opens a publisher with an Opus track (SSRC 0xA0A0) and `subscribers`
    /// each forwarded the track with outgoing SSRC 0x5500 + index.
    private func opusRoom(_ bed: RoomWorkerHarness, subscribers: Int) throws -> (UDPClient, [UDPClient]) {
        let publisher = try UDPClient(certificate: bed.certificate)
        try bed.open(publisher, room: "r1", participant: "PA_pub", role: .publisher)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a", description: Tracks.opusTrack(ssrc: 0xA0A0)))
        var subs: [UDPClient] = []
        for i in 0..<subscribers {
            let s = try UDPClient(certificate: bed.certificate)
            try bed.open(s, room: "r1", participant: "PA_sub\(i)", role: .subscriber)
            bed.execute(
                .forward(
                    room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub\(i)"),
                    outgoing: Tracks.outgoing(
                        .opus(payloadType: Tracks.opus), kind: .audio, ssrc: 0x5500 + UInt32(i), trackID: "TR_a")))
            subs.append(s)
        }
        #expect(try bed.connect([publisher] + subs))
        return (publisher, subs)
    }

    @Test(.timeLimit(.minutes(1)))
    func forwardsOpusToSubscriberWithOutgoingSSRCAndContiguousSequence() throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        let (publisher, subs) = try opusRoom(bed, subscribers: 1)
        let subscriber = subs[0]
        let packets = (0..<50).map { opusPacket($0, ssrc: 0xA0A0) }
        for p in packets { #expect(publisher.sendMedia(p)) }
        try UDPClient.pump([publisher, subscriber], for: .seconds(3)) { subscriber.receivedRTP.count >= 50 }

        let received = subscriber.receivedRTP
        #expect(received.count == 50)
        let headers = try received.map(header)
        #expect(headers.allSatisfy { $0.ssrc == SSRC(0x5500) && $0.payloadType == Tracks.opus })
        // Loopback keeps order; the rewriter keeps the first source's numbers.
        #expect(headers.map(\.sequenceNumber) == (0..<50).map { UInt16(1000 + $0) })
        #expect(try received.map(payload) == packets.map(payload))
        let counters = try #require(bed.counters)
        #expect(counters.forwarded == 50)
        #expect(counters.rtpPacketsIn == 50)
        #expect(counters.rtpPacketsOut == 50)
    }

    @Test(.timeLimit(.minutes(1)))
    func stopForwardEndsOnlyThatSubscription() throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        let (publisher, subs) = try opusRoom(bed, subscribers: 2)
        let all = [publisher] + subs
        for n in 0..<20 { publisher.sendMedia(opusPacket(n, ssrc: 0xA0A0)) }
        try UDPClient.pump(all, for: .seconds(3)) { subs.allSatisfy { $0.receivedRTP.count >= 20 } }
        #expect(subs.map(\.receivedRTP.count) == [20, 20])

        bed.execute(.stopForward(room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub1")))
        #expect(bed.query { $0.subscriptionCount } == 1)
        for n in 20..<40 { publisher.sendMedia(opusPacket(n, ssrc: 0xA0A0)) }
        try UDPClient.pump(all, for: .seconds(3)) { subs[0].receivedRTP.count >= 40 }
        try UDPClient.pump(all, for: .milliseconds(100))
        #expect(subs.map(\.receivedRTP.count) == [40, 20])
        #expect(try subs[0].receivedRTP.map { try header($0).sequenceNumber } == (0..<40).map { UInt16(1000 + $0) })

        // Pausing (maxWidth 0) drops; releasing the publisher ends the rest.
        bed.execute(
            .setPreference(
                room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub0"),
                preference: ReceivePreference(maxWidth: 0)))
        _ = bed.counters
        for n in 40..<45 { publisher.sendMedia(opusPacket(n, ssrc: 0xA0A0)) }
        try UDPClient.pump(all, for: .milliseconds(200))
        #expect(subs[0].receivedRTP.count == 40)
        #expect(bed.counters?.filtered.paused == 5)
        bed.execute(.releaseParticipant(room: "r1", participant: ParticipantID("PA_pub")))
        #expect(bed.query { [$0.trackCount, $0.subscriptionCount, $0.transports.transportCount] } == [0, 0, 2])
    }

    @Test(.timeLimit(.minutes(1)))
    func startsAMidRIDSimulcastSubscriptionOnTheTopLayersKeyframe() throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        let publisher = try UDPClient(certificate: bed.certificate)
        let subscriber = try UDPClient(certificate: bed.certificate)
        try bed.open(publisher, room: "r1", participant: "PA_pub", role: .publisher)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v",
                description: Tracks.vp8Track(rids: ["q", "h", "f"])))
        try bed.open(subscriber, room: "r1", participant: "PA_sub", role: .subscriber)
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"),
                outgoing: Tracks.outgoing(
                    .vp8(payloadType: Tracks.vp8, rtxPayloadType: Tracks.vp8RTX), kind: .video, ssrc: 0x7700, trackID: "TR_v")))
        #expect(try bed.connect([publisher, subscriber]))

        // Three layers on three unsignalled SSRCs; the first 5 packets of
        // each carry mid ("1", id 4) and rid (id 10), the rest none, as
        // browsers do once the SSRC is known.
        let layers: [(rid: String, ssrc: UInt32, tag: UInt8)] = [("q", 0x100, 0x01), ("h", 0x200, 0x02), ("f", 0x300, 0x03)]
        for n in 0..<30 {
            for layer in layers {
                let mid: [UInt8] = Array("1".utf8)
                let rid: [UInt8] = Array(layer.rid.utf8)
                let extensions: [(UInt8, [UInt8])] = n < 5 ? [(UInt8(4), mid), (UInt8(10), rid)] : []
                let vp8 = RTPBuilders.vp8Payload(pictureID: UInt16(100 + n), keyframe: n == 0)
                publisher.sendMedia(
                    RTPBuilders.packet(
                        payloadType: 96, sequenceNumber: UInt16(n) &+ UInt16(layer.ssrc), timestamp: UInt32(3000 * n),
                        ssrc: layer.ssrc, extensions: extensions, payload: vp8 + [layer.tag, UInt8(n)]))
            }
        }
        // An RTX packet (PT 97) of the top layer, with mid and repaired rid.
        publisher.sendMedia(
            RTPBuilders.packet(
                payloadType: 97, sequenceNumber: 1, ssrc: 0x301, extensions: [(4, Array("1".utf8)), (11, Array("f".utf8))],
                payload: [0x00, 0x05, 0xAA]))
        try UDPClient.pump([publisher, subscriber], for: .seconds(3)) { subscriber.receivedRTP.count >= 30 }
        try UDPClient.pump([publisher, subscriber], for: .milliseconds(100))

        // Before any allocation a subscription wants the top layer; each
        // layer's first packet is a keyframe, so it starts on f's and
        // forwards f only.
        let received = subscriber.receivedRTP
        #expect(received.count == 30)
        let headers = try received.map(header)
        #expect(headers.allSatisfy { $0.ssrc == SSRC(0x7700) && $0.payloadType == Tracks.vp8 })
        #expect(headers.map(\.sequenceNumber) == (0..<30).map { UInt16($0) &+ 0x300 })
        // The layer tag and packet index at the end of each payload.
        #expect(try received.map { Array(try payload($0).suffix(2)) } == (0..<30).map { [0x03, UInt8($0)] })
        // The publisher's mid/rid extensions (its ids, not the subscriber's)
        // are replaced on egress by ours: transport-wide sequence numbers
        // (id 3) counting up from 1, and abs-send-time (id 2).
        for (i, packet) in received.enumerated() {
            let h = headers[i]
            let twccRange = h.extensionValueRange(id: 3, in: packet.span.bytes)
            let sendTime = h.extensionValueRange(id: 2, in: packet.span.bytes)
            let mid = h.extensionValueRange(id: 4, in: packet.span.bytes)
            let twcc = try #require(twccRange)
            #expect(Array(packet[twcc]) == [0, UInt8(i + 1)])
            #expect(sendTime?.count == 3)
            #expect(mid == nil)
        }
        let counters = try #require(bed.counters)
        #expect(counters.filtered.otherLayer + counters.dropped.waitingForKeyframe == 60)
        #expect(counters.dropped.retransmission == 1)
        #expect(counters.forwarded == 30)
    }

    /// A worker with one VP8 track (SSRC 0xB0B0) published in room r1 and
    /// forwarded to one subscriber as SSRC 0x7700, both clients connected.
    private func vp8Room() throws -> (RoomWorkerHarness, UDPClient, UDPClient) {
        let bed = try RoomWorkerHarness()
        let publisher = try UDPClient(certificate: bed.certificate)
        let subscriber = try UDPClient(certificate: bed.certificate)
        try bed.open(publisher, room: "r1", participant: "PA_pub", role: .publisher)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: Tracks.vp8Track(ssrc: 0xB0B0)))
        try bed.open(subscriber, room: "r1", participant: "PA_sub", role: .subscriber)
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"),
                outgoing: Tracks.outgoing(.vp8(payloadType: Tracks.vp8), kind: .video, ssrc: 0x7700, trackID: "TR_v")))
        #expect(try bed.connect([publisher, subscriber]))
        return (bed, publisher, subscriber)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSubscriptionThatMissedTheKeyframeAsksThePublisherForOne() throws {
        let (bed, publisher, subscriber) = try vp8Room()
        defer { bed.stop() }

        // Delta frames only (the keyframe went out before the subscriber
        // was there): nothing can be forwarded, and the publisher is asked
        // for a keyframe, naming its own SSRC, without any PLI from the
        // subscriber.
        func send(_ n: Int, keyframe: Bool) {
            publisher.sendMedia(
                RTPBuilders.packet(
                    payloadType: 96, sequenceNumber: UInt16(n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
                    payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: keyframe)))
        }
        for n in 0..<10 { send(n, keyframe: false) }
        try UDPClient.pump([publisher, subscriber], for: .seconds(2)) { !publisher.receivedRTCP.isEmpty }
        let plis = publisher.receivedRTCP.flatMap { r in
            r.packets.compactMap { if case .pictureLossIndication(let p) = $0 { p } else { nil } }
        }
        #expect(plis.first?.mediaSSRC == SSRC(0xB0B0))
        #expect(subscriber.receivedRTP.isEmpty)
        // The keyframe comes: forwarding starts there.
        send(10, keyframe: true)
        send(11, keyframe: false)
        try UDPClient.pump([publisher, subscriber], for: .seconds(2)) { subscriber.receivedRTP.count >= 2 }
        #expect(subscriber.receivedRTP.count == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func keyframeRequestsReachThePublisherAtMostEvery500Milliseconds() throws {
        let (bed, publisher, subscriber) = try vp8Room()
        defer { bed.stop() }

        // A storm: a PLI every ~5 ms for 1.2 s.
        let pli = RTCPBuilders.pictureLossIndication(sender: SSRC(0xC1), media: SSRC(0x7700))
        let end = MonotonicClock.now() + .milliseconds(1200)
        var sent = 0
        while MonotonicClock.now() < end {
            #expect(subscriber.sendMedia(pli, rtcp: true))
            sent += 1
            try UDPClient.pump([publisher, subscriber], for: .milliseconds(5))
        }
        try UDPClient.pump([publisher, subscriber], for: .milliseconds(100))

        let requests = publisher.receivedRTCP.compactMap { r -> (PictureLossIndication, Instant)? in
            for case .pictureLossIndication(let p) in r.packets { return (p, r.at) }
            return nil
        }
        // At 0, ~500 and ~1000 ms into the 1.2 s storm.
        #expect((2...3).contains(requests.count))
        #expect(requests.allSatisfy { $0.0.mediaSSRC == SSRC(0xB0B0) })
        for (a, b) in zip(requests, requests.dropFirst()) { #expect(b.1 - a.1 >= .milliseconds(450)) }
        let counters = try #require(bed.counters)
        #expect(counters.plisForwarded == UInt64(requests.count))
        // Every PLI of the storm met the throttle; so did the forwarder's
        // own requests while it waits for a first keyframe.
        #expect(counters.plisForwarded + counters.keyframeRequestsSuppressed >= UInt64(sent))
    }

    @Test(.timeLimit(.minutes(1)))
    func roomsOnOneWorkerStayApartEvenWithTheSameSSRCAndTrackID() throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        var clients: [String: UDPClient] = [:]
        for room in ["r1", "r2"] {
            let pub = try UDPClient(certificate: bed.certificate)
            try bed.open(pub, room: room, participant: "PA_pub_\(room)", role: .publisher)
            bed.execute(
                .addIncomingTrack(
                    room: room, participant: ParticipantID("PA_pub_\(room)"), trackID: "TR_x",
                    description: Tracks.opusTrack(ssrc: 0x1111)))
            let sub = try UDPClient(certificate: bed.certificate)
            try bed.open(sub, room: room, participant: "PA_sub_\(room)", role: .subscriber)
            bed.execute(
                .forward(
                    room: room, trackID: "TR_x", subscriber: ParticipantID("PA_sub_\(room)"),
                    outgoing: Tracks.outgoing(
                        .opus(payloadType: Tracks.opus), kind: .audio, ssrc: room == "r1" ? 0xAAAA : 0xBBBB, trackID: "TR_x")))
            clients["pub_\(room)"] = pub
            clients["sub_\(room)"] = sub
        }
        let all = Array(clients.values)
        #expect(try bed.connect(all))
        for n in 0..<20 {
            clients["pub_r1"]?.sendMedia(opusPacket(n, ssrc: 0x1111, marker: 0xA1))
            clients["pub_r2"]?.sendMedia(opusPacket(n, ssrc: 0x1111, marker: 0xB2))
        }
        let sub1 = try #require(clients["sub_r1"])
        let sub2 = try #require(clients["sub_r2"])
        try UDPClient.pump(all, for: .seconds(3)) { sub1.receivedRTP.count >= 20 && sub2.receivedRTP.count >= 20 }
        try UDPClient.pump(all, for: .milliseconds(100))

        #expect(sub1.receivedRTP.count == 20)
        #expect(sub2.receivedRTP.count == 20)
        #expect(try sub1.receivedRTP.allSatisfy { try header($0).ssrc == SSRC(0xAAAA) && payload($0)[1] == 0xA1 })
        #expect(try sub2.receivedRTP.allSatisfy { try header($0).ssrc == SSRC(0xBBBB) && payload($0)[1] == 0xB2 })
    }

    @Test(.timeLimit(.minutes(1)))
    func sendsSenderReportsToSubscribersAndReceiverReportsToPublishers() throws {
        let bed = try RoomWorkerHarness { $0.reportInterval = .milliseconds(200) }
        defer { bed.stop() }
        let (publisher, subs) = try opusRoom(bed, subscribers: 1)
        let subscriber = subs[0]
        for n in 0..<10 { publisher.sendMedia(opusPacket(n, ssrc: 0xA0A0)) }
        let info = SenderInfo(ntpTimestamp: 0x1234_5678_9ABC_DEF0, rtpTimestamp: 48_000, packetCount: 10, octetCount: 30)
        publisher.sendMedia(RTCPBuilders.senderReportWithCNAME(sender: SSRC(0xA0A0), cname: "publisher", info: info), rtcp: true)

        func senderReports() -> [SenderReport] {
            subscriber.receivedRTCP.flatMap { $0.packets.compactMap { if case .senderReport(let s) = $0 { s } else { nil } } }
        }
        func reportBlocks() -> [ReceptionReport] {
            var blocks: [ReceptionReport] = []
            for r in publisher.receivedRTCP {
                for case .receiverReport(let report) in r.packets { blocks += report.reports }
            }
            return blocks
        }
        try UDPClient.pump([publisher, subscriber], for: .seconds(2)) {
            !senderReports().isEmpty && reportBlocks().contains { $0.lastSenderReport != 0 }
        }

        let sr = try #require(senderReports().first)
        #expect(sr.ssrc == SSRC(0x5500))
        #expect(sr.senderInfo.ntpTimestamp == RoomWorkerHarness.wallClock.rawValue)
        #expect(sr.senderInfo.packetCount == 10)
        #expect(sr.senderInfo.octetCount == 30)
        let block = try #require(reportBlocks().last)
        #expect(block.ssrc == SSRC(0xA0A0))
        #expect(block.extendedHighestSequenceNumber == 1009)
        #expect(block.cumulativeLost == 0)
        #expect(block.lastSenderReport == 0x5678_9ABC)
    }
}
