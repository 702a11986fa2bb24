import MediaRouter
import Negotiation
import RTCP
import RTP
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire

/// Loss recovery on both legs of one worker, on a virtual clock
/// (`RouterTestbed`): subscribers' NACKs answered on their RTX stream,
/// the publisher's gaps NACKed upstream, transport-wide feedback to the
/// publisher.
@Suite struct RoomRouterLossRecoveryTests {
    /// A publisher with one VP8 track (SSRC 0xB0B0, RTX 0xB0B1 on PT 97)
    /// and a subscriber receiving it as 0x7700 with RTX 0x7701.
    static func room() throws -> (RouterTestbed, TestPeer, TestPeer) {
        let bed = try RouterTestbed(workers: 1)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r1", worker: 0)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v",
                description: TestTrack.vp8Description(ssrc: 0xB0B0, rtxSSRC: 0xB0B1)), on: 0)
        let subscriber = try bed.addPeer("PA_sub", role: .subscriber, room: "r1", worker: 0)
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"),
                outgoing: TestTrack.outgoing(
                    .vp8(payloadType: TestTrack.vp8, rtxPayloadType: TestTrack.rtx), kind: .video, ssrc: 0x7700,
                    rtxSSRC: 0x7701, trackID: "TR_v")), on: 0)
        #expect(bed.connect())
        return (bed, publisher, subscriber)
    }

    static func media(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 96, sequenceNumber: UInt16(500 + n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
            payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0) + [0xD0, UInt8(n)])
    }

    /// RFC 4585 section 6.2.1 / RFC 4588 section 4: a subscriber's NACK is
    /// answered from the buffer on its RTX stream, the original sequence
    /// number first in the payload; the same NACK again within an RTT is
    /// not answered twice.
    @Test func subscriberNACKsAreAnsweredOnTheRTXStreamOncePerRoundTrip() throws {
        let (bed, publisher, subscriber) = try Self.room()
        for n in 0..<10 {
            bed.send(Self.media(n), from: publisher)
            bed.run(for: .milliseconds(33))
        }
        let forwarded = subscriber.rtpHeaders
        try #require(forwarded.count == 10)
        let lost = [forwarded[3].sequenceNumber, forwarded[5].sequenceNumber]
        let nack = RTCPBuilders.nack(sender: SSRC(0xC1), media: SSRC(0x7700), lost: lost)
        bed.send(nack, from: subscriber, rtcp: true)
        bed.send(nack, from: subscriber, rtcp: true)
        bed.run(for: .milliseconds(100))

        let resent = Array(subscriber.rtp.dropFirst(10))
        #expect(resent.count == 2)
        for (i, packet) in resent.enumerated() {
            let h = try RTPHeader(parsing: packet.span.bytes)
            #expect(h.ssrc == SSRC(0x7701))
            #expect(h.payloadType == TestTrack.rtx)
            let payload = Array(packet[h.payloadRange])
            #expect(Array(payload.prefix(2)) == [UInt8(lost[i] >> 8), UInt8(lost[i] & 0xFF)])
            #expect(Array(payload.suffix(2)) == [0xD0, UInt8(i == 0 ? 3 : 5)])
        }
        let counters = bed.routers[0].counters
        #expect(counters.nacksReceived == 2)
        #expect(counters.retransmissionsSent == 2)
        #expect(counters.retransmissionsLimited == 2)
        // Nothing was lost upstream: the publisher saw no NACK.
        #expect(publisher.nacks.isEmpty)
    }

    /// A gap in what the publisher sends is NACKed upstream within a
    /// periodic round; its RTX answer is restored and reaches the
    /// subscriber with the number the packet would have had in order.
    @Test func publisherLossesAreNACKedAndTheirRTXAnswersForwardedInPlace() throws {
        let (bed, publisher, subscriber) = try Self.room()
        for n in 0..<10 where n != 4 { bed.send(Self.media(n), from: publisher) }
        bed.run(for: .milliseconds(60))
        let nacked = publisher.nacks.flatMap(\.lostSequenceNumbers)
        #expect(nacked.first == 504)
        #expect(Set(nacked) == [504])
        // The RTX answer: SSRC 0xB0B1, PT 97, OSN 504, then the payload.
        let original = Self.media(4)
        let header = try RTPHeader(parsing: original.span.bytes)
        bed.send(
            RTPBuilders.packet(
                payloadType: 97, sequenceNumber: 1, timestamp: header.timestamp, ssrc: 0xB0B1,
                payload: [0x01, 0xF8] + Array(original[header.payloadRange])), from: publisher)
        let received = subscriber.rtpHeaders
        #expect(received.count == 10)
        // The late packet takes the number it would have had: base + 4.
        let base = try #require(received.first?.sequenceNumber)
        #expect(Set(received.map(\.sequenceNumber)) == Set((0..<10).map { base &+ UInt16($0) }))
        #expect(received.last?.sequenceNumber == base &+ 4)
        #expect(received.allSatisfy { $0.ssrc == SSRC(0x7700) })
        #expect(Array(subscriber.rtp.last?.suffix(2) ?? []) == [0xD0, 4])
        let counters = bed.routers[0].counters
        #expect(counters.retransmissionsReceived == 1)
        #expect(counters.nacksSent >= 1)
        // Once repaired, the number is not asked for again.
        let asked = publisher.nacks.count
        bed.run(for: .seconds(1))
        #expect(publisher.nacks.count == asked)
    }

    /// A publisher's packets carry transport-wide sequence numbers (id 5
    /// here); the worker reports their arrival back in transport-cc
    /// feedback, losses included, so the publisher's estimate can grow.
    @Test func publishersGetTransportWideFeedbackForEveryNumberLostOrReceived() throws {
        let bed = try RouterTestbed(workers: 1)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r1", worker: 0)
        var description = TestTrack.vp8Description(ssrc: 0xB0B0)
        description.headerExtensions.transportWideSequenceNumber = 5
        bed.execute(
            .addIncomingTrack(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: description),
            on: 0)
        #expect(bed.connect())

        // Numbers 100...139, 120 lost, 5 ms apart.
        for n in 0..<40 where n != 20 {
            bed.send(
                RTPBuilders.packet(
                    payloadType: 96, sequenceNumber: UInt16(n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
                    extensions: [(5, [0, UInt8(100 + n)])],
                    payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0)), from: publisher)
            bed.run(for: .milliseconds(5))
        }
        bed.run(for: .milliseconds(100))
        let feedback = publisher.rtcp.compactMap { if case .transportLayerCC(let f) = $0 { f } else { nil } }
        let results = feedback.flatMap(\.packets)
        #expect(results.map(\.sequenceNumber) == (100..<140).map { UInt16($0) })
        #expect(results.filter { $0.arrival == nil }.map(\.sequenceNumber) == [120])
        #expect(bed.routers[0].counters.transportFeedbackSent == UInt64(feedback.count))
        #expect(feedback.count >= 2)
    }
}
