import MediaRouter
import Negotiation
import RTCP
import RTP
import RoomProtocol
import Rooms
import SFUTesting
import SRTP
import Testing
import Wire

/// RFC 7714 section 8.1: one (SSRC, SRTP index) never protects two
/// different packets. A publisher's VP8 and Opus tracks forwarded to a
/// subscriber that NACKs both, with and without RTX for video (a
/// WHEP-like subscription has none), in both SRTP profiles; every SRTP
/// datagram the subscriber receives is compared with every other one of
/// the same SSRC and sequence number.
@Suite struct RoomRouterSRTPIndexTests {
    static let videoOut: UInt32 = 0x7700
    static let videoRTX: UInt32 = 0x7701
    static let audioOut: UInt32 = 0x6600

    static func media(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 96, sequenceNumber: UInt16(500 + n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
            payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0) + [0xD0, UInt8(n)])
    }

    static func audio(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(100 + n), timestamp: UInt32(960 * n), ssrc: 0xA0A0,
            payload: RTPBuilders.opusPayload(frameBytes: 40))
    }

    static func ssrc(_ p: [UInt8]) -> UInt32 { UInt32(p[8]) << 24 | UInt32(p[9]) << 16 | UInt32(p[10]) << 8 | UInt32(p[11]) }

    @Test(arguments: SRTPProfile.allCases, [true, false])
    func retransmissionsNeverReuseAnIndex(profile: SRTPProfile, subscriberHasRTX: Bool) throws {
        let bed = try RouterTestbed(workers: 1)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r1", worker: 0, profiles: [profile])
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v",
                description: TestTrack.vp8Description(ssrc: 0xB0B0, rtxSSRC: 0xB0B1)), on: 0)
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a",
                description: TestTrack.opusDescription(mid: "0", ssrc: 0xA0A0)), on: 0)
        let subscriber = try bed.addPeer("PA_sub", role: .subscriber, room: "r1", worker: 0, profiles: [profile])
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"),
                outgoing: TestTrack.outgoing(
                    .vp8(payloadType: TestTrack.vp8, rtxPayloadType: subscriberHasRTX ? TestTrack.rtx : nil), kind: .video,
                    ssrc: Self.videoOut, rtxSSRC: subscriberHasRTX ? Self.videoRTX : nil, trackID: "TR_v")), on: 0)
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub"),
                outgoing: TestTrack.outgoing(
                    .opus(payloadType: TestTrack.opus), kind: .audio, ssrc: Self.audioOut, trackID: "TR_a")), on: 0)
        #expect(bed.connect())

        for n in 0..<10 {
            bed.send(Self.media(n), from: publisher)
            bed.send(Self.audio(n), from: publisher)
            bed.run(for: .milliseconds(20))
        }
        let headers = subscriber.rtpHeaders
        let videoNumbers = headers.filter { $0.ssrc == SSRC(Self.videoOut) }.map(\.sequenceNumber)
        let audioNumbers = headers.filter { $0.ssrc == SSRC(Self.audioOut) }.map(\.sequenceNumber)
        try #require(videoNumbers.count == 10 && audioNumbers.count == 10)
        let before = bed.routers[0].counters
        // Each NACK twice, the second after the once-per-RTT rule has
        // passed (no RTT known: the limiter's default), so every path that
        // could resend is taken more than once.
        for _ in 0..<2 {
            bed.send(
                RTCPBuilders.nack(sender: SSRC(0xC1), media: SSRC(Self.videoOut), lost: [videoNumbers[3], videoNumbers[5]]),
                from: subscriber, rtcp: true)
            bed.send(
                RTCPBuilders.nack(sender: SSRC(0xC1), media: SSRC(Self.audioOut), lost: [audioNumbers[2]]), from: subscriber,
                rtcp: true)
            bed.run(for: .milliseconds(600))
        }

        // The rule itself: per (SSRC, sequence number), one set of bytes.
        var seen: [UInt64: [UInt8]] = [:]
        var reused = 0
        for packet in subscriber.protectedRTP {
            let key = UInt64(Self.ssrc(packet)) << 16 | UInt64(packet[2]) << 8 | UInt64(packet[3])
            if let first = seen[key] {
                if first != packet { reused += 1 }
            } else {
                seen[key] = packet
            }
        }
        #expect(reused == 0)
        // Every datagram decrypted: none was refused as a replay.
        #expect(subscriber.protectedRTP.count == subscriber.rtp.count)
        let counters = bed.routers[0].counters
        #expect(counters.dropped.repeatedSRTPIndex == 0)
        let rtxPackets = subscriber.protectedRTP.filter { Self.ssrc($0) == Self.videoRTX }
        if subscriberHasRTX {
            // Video is repaired on RTX, under new indices, once per NACK
            // round; audio has no RTX.
            #expect(rtxPackets.count == 4)
            #expect(counters.retransmissionsSent == 4)
            #expect(counters.nacksWithoutRTX == 2)
        } else {
            #expect(rtxPackets.isEmpty)
            #expect(counters.retransmissionsSent == 0)
            #expect(counters.nacksWithoutRTX == 4)
            // The video NACK became a keyframe request to the publisher.
            #expect(counters.plisForwarded > before.plisForwarded)
            #expect(publisher.pictureLossIndications(for: SSRC(0xB0B0)) >= 1)
        }
    }
}
