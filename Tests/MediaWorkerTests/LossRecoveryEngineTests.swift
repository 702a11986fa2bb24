import MediaWorker
import Negotiation
import RTCP
import RTP
import Rooms
import SFUTesting
import Testing
import Wire

@Suite struct LossRecoveryEngineTests {
    /// A publisher with one VP8 track (SSRC 0xB0B0, RTX 0xB0B1 on PT 97)
    /// and a subscriber receiving it as 0x7700 with RTX 0x7701.
    private func room() throws -> (RoomWorkerHarness, UDPClient, UDPClient) {
        let bed = try RoomWorkerHarness()
        let publisher = try UDPClient(certificate: bed.certificate)
        let subscriber = try UDPClient(certificate: bed.certificate)
        try bed.open(publisher, room: "r1", participant: "PA_pub", role: .publisher)
        var description = Tracks.vp8Track(ssrc: 0xB0B0)
        description.sources?.streams[0].rtxSSRC = SSRC(0xB0B1)
        bed.execute(
            .addIncomingTrack(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: description))
        try bed.open(subscriber, room: "r1", participant: "PA_sub", role: .subscriber)
        var outgoing = Tracks.outgoing(
            .vp8(payloadType: Tracks.vp8, rtxPayloadType: Tracks.vp8RTX), kind: .video, ssrc: 0x7700, trackID: "TR_v")
        outgoing.rtxSSRC = SSRC(0x7701)
        bed.execute(.forward(room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"), outgoing: outgoing))
        #expect(try bed.connect([publisher, subscriber]))
        return (bed, publisher, subscriber)
    }

    private func media(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 96, sequenceNumber: UInt16(500 + n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
            payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0) + [0xD0, UInt8(n)])
    }

    /// RFC 4585 section 6.2.1 / RFC 4588 section 4: a subscriber's NACK is
    /// answered from the buffer on its RTX stream, the original sequence
    /// number first in the payload; the same NACK again within an RTT is
    /// not answered twice.
    @Test(.timeLimit(.minutes(1)))
    func subscriberNACKsAreAnsweredOnTheRTXStreamOncePerRoundTrip() throws {
        let (bed, publisher, subscriber) = try room()
        defer { bed.stop() }
        for n in 0..<10 { publisher.sendMedia(media(n)) }
        try UDPClient.pump([publisher, subscriber], for: .seconds(3)) { subscriber.receivedRTP.count >= 10 }
        let forwarded = try subscriber.receivedRTP.map { try RTPHeader(parsing: $0.span.bytes) }
        try #require(forwarded.count == 10)
        let lost = [forwarded[3].sequenceNumber, forwarded[5].sequenceNumber]
        let nack = RTCPBuilders.nack(sender: SSRC(0xC1), media: SSRC(0x7700), lost: lost)
        subscriber.sendMedia(nack, rtcp: true)
        subscriber.sendMedia(nack, rtcp: true)
        try UDPClient.pump([publisher, subscriber], for: .seconds(2)) { subscriber.receivedRTP.count >= 12 }
        try UDPClient.pump([publisher, subscriber], for: .milliseconds(100))

        let resent = Array(subscriber.receivedRTP.dropFirst(10))
        #expect(resent.count == 2)
        for (i, packet) in resent.enumerated() {
            let h = try RTPHeader(parsing: packet.span.bytes)
            #expect(h.ssrc == SSRC(0x7701))
            #expect(h.payloadType == Tracks.vp8RTX)
            let payload = Array(packet[h.payloadRange])
            #expect(Array(payload.prefix(2)) == [UInt8(lost[i] >> 8), UInt8(lost[i] & 0xFF)])
            #expect(Array(payload.suffix(2)) == [0xD0, UInt8(i == 0 ? 3 : 5)])
        }
        #expect(resent.count == 2)
        let counters = try #require(bed.counters)
        #expect(counters.nacksReceived == 2)
        #expect(counters.retransmissionsSent == 2)
        #expect(counters.retransmissionsLimited == 2)
    }

    /// A gap in what the publisher sends is NACKed upstream; its RTX answer
    /// is restored and reaches the subscriber with the number the packet
    /// would have had in order.
    @Test(.timeLimit(.minutes(1)))
    func publisherLossesAreNACKedAndTheirRTXAnswersForwardedInPlace() throws {
        let (bed, publisher, subscriber) = try room()
        defer { bed.stop() }
        for n in 0..<10 where n != 4 { publisher.sendMedia(media(n)) }
        func nacked() -> [UInt16] {
            publisher.receivedRTCP.flatMap { r in
                r.packets.compactMap { if case .transportLayerNACK(let n) = $0 { n } else { nil } }
            }.flatMap(\.lostSequenceNumbers)
        }
        try UDPClient.pump([publisher, subscriber], for: .seconds(2)) { nacked().contains(504) }
        #expect(nacked().first == 504)
        // The RTX answer: SSRC 0xB0B1, PT 97, OSN 504, then the payload.
        let original = media(4)
        let header = try RTPHeader(parsing: original.span.bytes)
        let rtx = RTPBuilders.packet(
            payloadType: 97, sequenceNumber: 1, timestamp: header.timestamp, ssrc: 0xB0B1,
            payload: [0x01, 0xF8] + Array(original[header.payloadRange]))
        publisher.sendMedia(rtx)
        try UDPClient.pump([publisher, subscriber], for: .seconds(2)) { subscriber.receivedRTP.count >= 10 }
        let received = try subscriber.receivedRTP.map { try RTPHeader(parsing: $0.span.bytes) }
        #expect(received.count == 10)
        // The late packet takes the number it would have had: base + 4.
        let base = try #require(received.first?.sequenceNumber)
        #expect(Set(received.map(\.sequenceNumber)) == Set((0..<10).map { base &+ UInt16($0) }))
        #expect(received.last?.sequenceNumber == base &+ 4)
        #expect(Array(subscriber.receivedRTP.last?.suffix(2) ?? []) == [0xD0, 4])
        let counters = try #require(bed.counters)
        #expect(counters.retransmissionsReceived == 1)
        #expect(counters.nacksSent >= 1)
    }
}
