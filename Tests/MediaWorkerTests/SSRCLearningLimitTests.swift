import MediaWorker
import Negotiation
import PeerSession
import RTP
import Rooms
import SFUTesting
import Testing
import Wire

/// A publisher with valid keys that names its m-section's mid on packets
/// from a new SSRC each time: the track learns one media and one RTX SSRC
/// per layer and no more (`unsignalledSSRC`), the transport admits at most
/// `maxInboundSSRCs` (`srtpSSRCLimit`), and the first SSRC, and another
/// publisher's media on the same worker, keep reaching the subscriber.
@Suite struct SSRCLearningLimitTests {
    private func packet(_ n: Int, ssrc: UInt32) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 96, sequenceNumber: UInt16(100 + n), timestamp: UInt32(3000 * n), ssrc: ssrc,
            extensions: [(4, Array("1".utf8))],
            payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0) + [0xD0, UInt8(n & 0xFF)])
    }

    @Test(.timeLimit(.minutes(1)))
    func newSSRCsNamingAMidStopAtTheTracksRoom() throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        let attacker = try UDPClient(certificate: bed.certificate)
        let other = try UDPClient(certificate: bed.certificate)
        let subscriber = try UDPClient(certificate: bed.certificate)
        try bed.open(attacker, room: "r1", participant: "PA_att", role: .publisher)
        try bed.open(other, room: "r2", participant: "PA_oth", role: .publisher)
        bed.execute(
            .addIncomingTrack(room: "r1", participant: ParticipantID("PA_att"), trackID: "TR_a", description: Tracks.vp8Track()))
        bed.execute(
            .addIncomingTrack(
                room: "r2", participant: ParticipantID("PA_oth"), trackID: "TR_o", description: Tracks.vp8Track(ssrc: 0x0707)))
        try bed.open(subscriber, room: "r1", participant: "PA_sub", role: .subscriber)
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub"),
                outgoing: Tracks.outgoing(.vp8(payloadType: Tracks.vp8), kind: .video, ssrc: 0x7700, trackID: "TR_a")))
        bed.execute(
            .forward(
                room: "r2", trackID: "TR_o", subscriber: ParticipantID("PA_sub"),
                outgoing: Tracks.outgoing(.vp8(payloadType: Tracks.vp8), kind: .video, ssrc: 0x7800, trackID: "TR_o")))
        #expect(try bed.connect([attacker, other, subscriber]))

        let legit: UInt32 = 0xB0B0
        attacker.sendMedia(packet(0, ssrc: legit))
        let flood = 1000
        for n in 0..<flood {
            attacker.sendMedia(packet(n + 1, ssrc: 0x4000_0000 + UInt32(n)))
            if n % 10 == 0 { try attacker.step() }
        }
        for n in 0..<10 {
            attacker.sendMedia(packet(flood + 1 + n, ssrc: legit))
            other.sendMedia(
                RTPBuilders.packet(
                    payloadType: 96, sequenceNumber: UInt16(n), timestamp: UInt32(3000 * n), ssrc: 0x0707,
                    payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0) + [0xD1, UInt8(n)]))
        }
        func count(_ ssrc: UInt32) throws -> Int {
            try subscriber.receivedRTP.filter { try RTPHeader(parsing: $0.span.bytes).ssrc == SSRC(ssrc) }.count
        }
        try UDPClient.pump([attacker, other, subscriber], for: .seconds(3)) {
            (try? count(0x7700)) ?? 0 >= 11 && (try? count(0x7800)) == 10
        }
        let counters = try #require(bed.counters)
        // One layer: room for the legitimate SSRC and one more. The
        // transport admits 64 SSRCs; the 62 the track refuses and the rest
        // the transport drops before decrypting them.
        let cap = PeerTransport.defaultMaxInboundSSRCs
        #expect(counters.dropped.unsignalledSSRC == UInt64(cap - 2))
        #expect(counters.dropped.srtpSSRCLimit == UInt64(flood - (cap - 1)))
        // The legitimate SSRC's 11 packets reach the subscriber (and
        // perhaps the one learned packet of the second SSRC); the other
        // room's too.
        #expect(try count(0x7700) >= 11)
        #expect(try count(0x7800) == 10)
    }
}
