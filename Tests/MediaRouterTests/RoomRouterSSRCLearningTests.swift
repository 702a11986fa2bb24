import MediaRouter
import Negotiation
import PeerSession
import RTP
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire

/// A publisher with valid keys that names its m-section's mid on packets
/// from a new SSRC each time: the track learns one media and one RTX SSRC
/// per layer and no more (`unsignalledSSRC`), the transport admits at most
/// `maxInboundSSRCs` (`srtpSSRCLimit`), and the first SSRC, and another
/// publisher's media on the same worker, keep reaching the subscriber.
@Suite struct RoomRouterSSRCLearningTests {
    static func packet(_ n: Int, ssrc: UInt32) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 96, sequenceNumber: UInt16(100 + n), timestamp: UInt32(3000 * n), ssrc: ssrc,
            extensions: [(4, Array("1".utf8))],
            payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0) + [0xD0, UInt8(n & 0xFF)])
    }

    @Test func newSSRCsNamingAMidStopAtTheTracksRoom() throws {
        let bed = try RouterTestbed(workers: 1)
        let attacker = try bed.addPeer("PA_att", role: .publisher, room: "r1", worker: 0)
        let other = try bed.addPeer("PA_oth", role: .publisher, room: "r2", worker: 0)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_att"), trackID: "TR_a", description: TestTrack.vp8Description()),
            on: 0)
        bed.execute(
            .addIncomingTrack(
                room: "r2", participant: ParticipantID("PA_oth"), trackID: "TR_o",
                description: TestTrack.vp8Description(ssrc: 0x0707)), on: 0)
        let subscriber = try bed.addPeer("PA_sub", role: .subscriber, room: "r1", worker: 0)
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub"),
                outgoing: TestTrack.outgoing(
                    .vp8(payloadType: TestTrack.vp8), kind: .video, ssrc: 0x7700, trackID: "TR_a", publisher: "PA_att")), on: 0)
        bed.execute(
            .forward(
                room: "r2", trackID: "TR_o", subscriber: ParticipantID("PA_sub"),
                outgoing: TestTrack.outgoing(
                    .vp8(payloadType: TestTrack.vp8), kind: .video, ssrc: 0x7800, trackID: "TR_o", publisher: "PA_oth")), on: 0)
        #expect(bed.connect())

        let legit: UInt32 = 0xB0B0
        bed.send(Self.packet(0, ssrc: legit), from: attacker)
        let flood = 1000
        for n in 0..<flood {
            bed.send(Self.packet(n + 1, ssrc: 0x4000_0000 + UInt32(n)), from: attacker)
            if n % 10 == 0 { bed.run(for: .milliseconds(5)) }
        }
        for n in 0..<10 {
            bed.send(Self.packet(flood + 1 + n, ssrc: legit), from: attacker)
            bed.send(
                RTPBuilders.packet(
                    payloadType: 96, sequenceNumber: UInt16(n), timestamp: UInt32(3000 * n), ssrc: 0x0707,
                    payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0) + [0xD1, UInt8(n)]),
                from: other)
            bed.run(for: .milliseconds(20))
        }
        let headers = subscriber.rtpHeaders
        let counters = bed.routers[0].counters
        // One layer: room for the legitimate SSRC and one more. The
        // transport admits 64 SSRCs; the 62 the track refuses and the rest
        // the transport drops before decrypting them.
        let cap = PeerTransport.defaultMaxInboundSSRCs
        #expect(counters.dropped.unsignalledSSRC == UInt64(cap - 2))
        #expect(counters.dropped.srtpSSRCLimit == UInt64(flood - (cap - 1)))
        // The legitimate SSRC, the one more the track learned and the other
        // room's: nothing of the flood is routed.
        #expect(bed.routers[0].stateSizes.routedSSRCs == 3)
        // Exactly the legitimate SSRC's 11 packets reach the subscriber (the
        // learned second SSRC's packet is not forwarded as video), and the
        // other room's 10.
        func tags(_ ssrc: UInt32) -> [[UInt8]] {
            zip(subscriber.rtp, headers).filter { $0.1.ssrc == SSRC(ssrc) }.map { Array($0.0.suffix(2)) }
        }
        #expect(tags(0x7700) == [[0xD0, 0]] + (0..<10).map { [0xD0, UInt8((flood + 1 + $0) & 0xFF)] })
        #expect(tags(0x7800) == (0..<10).map { [0xD1, UInt8($0)] })
        #expect(headers.count == 21)
    }
}
