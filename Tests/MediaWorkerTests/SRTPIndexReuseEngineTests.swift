import MediaWorker
import Negotiation
import RTCP
import RTP
import Rooms
import SFUTesting
import Testing
import Wire

/// RFC 7714 section 8.1: one (SSRC, SRTP index) never protects two
/// different packets. Driven through the real worker: a publisher's VP8
/// and Opus tracks forwarded to a subscriber that NACKs both, with and
/// without RTX for video (a WHEP-like subscription has none), in both
/// SRTP profiles; every SRTP datagram the subscriber's socket receives is
/// compared with every other one of the same SSRC and sequence number.
@Suite struct SRTPIndexReuseEngineTests {
    private static let videoOut: UInt32 = 0x7700
    private static let videoRTX: UInt32 = 0x7701
    private static let audioOut: UInt32 = 0x6600

    private func media(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 96, sequenceNumber: UInt16(500 + n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
            payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0) + [0xD0, UInt8(n)])
    }

    private func audio(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(100 + n), timestamp: UInt32(960 * n), ssrc: 0xA0A0,
            payload: RTPBuilders.opusPayload(frameBytes: 40))
    }

    @Test(.timeLimit(.minutes(1)), arguments: SRTPProfile.allCases, [true, false])
    func retransmissionsNeverReuseAnIndex(profile: SRTPProfile, subscriberHasRTX: Bool) throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        let publisher = try UDPClient(certificate: bed.certificate, profiles: [profile])
        let subscriber = try UDPClient(certificate: bed.certificate, profiles: [profile])
        try bed.open(publisher, room: "r1", participant: "PA_pub", role: .publisher)
        var video = Tracks.vp8Track(ssrc: 0xB0B0)
        video.sources?.streams[0].rtxSSRC = SSRC(0xB0B1)
        bed.execute(.addIncomingTrack(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: video))
        bed.execute(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a",
                description: Tracks.opusTrack(mid: "0", ssrc: 0xA0A0)))
        try bed.open(subscriber, room: "r1", participant: "PA_sub", role: .subscriber)
        var videoOut = Tracks.outgoing(
            .vp8(payloadType: Tracks.vp8, rtxPayloadType: subscriberHasRTX ? Tracks.vp8RTX : nil), kind: .video,
            ssrc: Self.videoOut, trackID: "TR_v")
        if subscriberHasRTX { videoOut.rtxSSRC = SSRC(Self.videoRTX) }
        bed.execute(.forward(room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_sub"), outgoing: videoOut))
        bed.execute(
            .forward(
                room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub"),
                outgoing: Tracks.outgoing(.opus(payloadType: Tracks.opus), kind: .audio, ssrc: Self.audioOut, trackID: "TR_a")))
        #expect(try bed.connect([publisher, subscriber]))

        for n in 0..<10 {
            publisher.sendMedia(media(n))
            publisher.sendMedia(audio(n))
        }
        try UDPClient.pump([publisher, subscriber], for: .seconds(3)) { subscriber.receivedRTP.count >= 20 }
        let headers = try subscriber.receivedRTP.map { try RTPHeader(parsing: $0.span.bytes) }
        let videoNumbers = headers.filter { $0.ssrc == SSRC(Self.videoOut) }.map(\.sequenceNumber)
        let audioNumbers = headers.filter { $0.ssrc == SSRC(Self.audioOut) }.map(\.sequenceNumber)
        try #require(videoNumbers.count == 10 && audioNumbers.count == 10)
        let before = try #require(bed.counters)
        // Each NACK twice, the second after the once-per-RTT rule has
        // passed (no RTT known: the limiter's default), so every path that
        // could resend is taken more than once.
        for _ in 0..<2 {
            subscriber.sendMedia(
                RTCPBuilders.nack(sender: SSRC(0xC1), media: SSRC(Self.videoOut), lost: [videoNumbers[3], videoNumbers[5]]),
                rtcp: true)
            subscriber.sendMedia(
                RTCPBuilders.nack(sender: SSRC(0xC1), media: SSRC(Self.audioOut), lost: [audioNumbers[2]]), rtcp: true)
            try UDPClient.pump([publisher, subscriber], for: .milliseconds(600))
        }

        // The rule itself: per (SSRC, sequence number), one set of bytes.
        var seen: [UInt64: [UInt8]] = [:]
        var reused = 0
        for packet in subscriber.protectedRTP {
            let ssrc = UInt64(packet[8]) << 24 | UInt64(packet[9]) << 16 | UInt64(packet[10]) << 8 | UInt64(packet[11])
            let key = ssrc << 16 | UInt64(packet[2]) << 8 | UInt64(packet[3])
            if let first = seen[key] {
                if first != packet { reused += 1 }
            } else {
                seen[key] = packet
            }
        }
        #expect(reused == 0)
        let counters = try #require(bed.counters)
        #expect(counters.dropped.repeatedSRTPIndex == 0)
        let rtxPackets = subscriber.protectedRTP.filter {
            UInt32($0[8]) << 24 | UInt32($0[9]) << 16 | UInt32($0[10]) << 8 | UInt32($0[11]) == Self.videoRTX
        }
        if subscriberHasRTX {
            // Video is repaired on RTX, under new indices; audio has no RTX.
            #expect(rtxPackets.count >= 2)
            #expect(counters.retransmissionsSent >= 2)
            #expect(counters.nacksWithoutRTX == 2)
        } else {
            #expect(rtxPackets.isEmpty)
            #expect(counters.retransmissionsSent == 0)
            #expect(counters.nacksWithoutRTX == 4)
            // The video NACK became a keyframe request to the publisher.
            #expect(counters.plisForwarded > before.plisForwarded)
        }
    }
}
