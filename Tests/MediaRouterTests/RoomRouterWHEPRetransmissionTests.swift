import DTLS
import ICE
import MediaRouter
import Negotiation
import RTP
import RoomProtocol
import Rooms
import SDP
import SFUTesting
import Testing
import Wire

/// A WHEP viewer's NACK is repaired on its own RTX stream (RFC 4588), like
/// a room subscriber's: the subscription is what `PlaybackAnswerer` answers
/// to the viewer's offer, in the viewer's payload type numbers (here not the
/// publisher's), and the lost packet comes back wrapped in the viewer's RTX
/// payload type on the RTX SSRC of the answer's FID group, under a new
/// SRTP index (docs/TRANSPORT.md, "One index, one packet").
@Suite struct RoomRouterWHEPRetransmissionTests {
    static let viewerVP8: UInt8 = 120
    static let viewerRTX: UInt8 = 121

    /// A recvonly VP8 offer as roombot's WHEP mode makes it, renumbered
    /// (VP8 96/RTX 97 to 120/121) so that the forwarder must rewrite.
    static func viewerOffer(rtx: Bool) throws -> PlaybackOffer {
        let local = LocalTransportParameters(
            credentials: ICECredentials(ufrag: "ViewU", password: "viewerpasswordviewerpass"),
            fingerprint: CertificateFingerprint(algorithm: .sha256, digest: Array(repeating: 0xC0, count: 32))!,
            candidates: [ICECandidate.host(TransportAddress(ipv4: 127, 0, 0, 1, port: 50002))], isICELite: false)
        var builder = ClientOfferBuilder(sessionID: 5, local: local)
        var text = builder.playbackOffer(audio: false).text
        for (from, to) in [("96", "\(viewerVP8)"), ("97", "\(viewerRTX)")] {
            for prefix in ["a=rtpmap:", "a=fmtp:", "a=rtcp-fb:"] {
                text = text.replacing(prefix + from + " ", with: prefix + to + " ")
            }
        }
        text = text.replacing("apt=96", with: "apt=\(viewerVP8)").replacing(
            "SAVPF 96 97", with: "SAVPF \(viewerVP8) \(viewerRTX)")
        var offer = try SessionDescription.parse(text)
        if !rtx {
            offer.media[0].attributes.removeAll { a in
                switch a {
                case .rtpmap(let m): m.encodingName == "rtx"
                case .fmtp(let f): f["apt"] != nil
                default: false
                }
            }
        }
        return try PlaybackOffer(offer)
    }

    static func media(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 96, sequenceNumber: UInt16(800 + n), timestamp: UInt32(3000 * n), ssrc: 0xB0B0,
            payload: RTPBuilders.vp8Payload(pictureID: UInt16(n), keyframe: n == 0) + [0xE0, UInt8(n)])
    }

    @Test(arguments: [true, false])
    func aWHEPViewersNACKIsRepairedOnItsRTXStream(viewerOffersRTX: Bool) throws {
        let bed = try RouterTestbed(workers: 1)
        let publisher = try bed.addPeer("PA_pub", role: .publisher, room: "r1", worker: 0)
        let video = TestTrack.vp8Description(ssrc: 0xB0B0, rtxSSRC: 0xB0B1)
        bed.execute(
            .addIncomingTrack(room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_v", description: video), on: 0)

        // What RoomDirectory does for a WHEP POST: a source with our two
        // SSRCs, answered against the viewer's offer.
        var answerer = PlaybackAnswerer(sessionID: 1)
        let source = PlaybackSource(
            trackID: "TR_v", streamID: "PA_pub", codec: video.codecs[0], ssrc: SSRC(0x7700), rtxSSRC: SSRC(0x7701),
            cname: "swiftlet")
        let answer = answerer.makeAnswer(
            to: try Self.viewerOffer(rtx: viewerOffersRTX), sources: [source],
            local: LocalTransportParameters(
                credentials: .random(), fingerprint: bed.certificate.fingerprint(), candidates: []))
        let outgoing = try #require(answer.assignments.first?.track)
        #expect(outgoing.codec.payloadType.rawValue == Self.viewerVP8)
        let fid = answer.description.media[0].sourceGroups.first { $0.semantics == SourceGroup.flowIdentification }
        #expect(fid?.ssrcs == (viewerOffersRTX ? [SSRC(0x7700), SSRC(0x7701)] : nil))

        let viewer = try bed.addPeer("PA_view", role: .subscriber, room: "r1", worker: 0)
        bed.execute(.forward(room: "r1", trackID: "TR_v", subscriber: ParticipantID("PA_view"), outgoing: outgoing), on: 0)
        #expect(bed.connect())
        for n in 0..<10 {
            bed.send(Self.media(n), from: publisher)
            bed.run(for: .milliseconds(33))
        }
        let forwarded = zip(viewer.rtp, viewer.rtpHeaders).filter { $0.1.ssrc == SSRC(0x7700) }
        try #require(forwarded.count == 10)
        // Only a viewer with RTX keeps the history NACKs are answered from.
        #expect((bed.routers[0].forwardedHistoryBytes > 0) == viewerOffersRTX)
        #expect(forwarded.allSatisfy { $0.1.payloadType.rawValue == Self.viewerVP8 })
        let lost = forwarded[4]

        bed.send(
            RTCPBuilders.nack(sender: SSRC(0xC1), media: SSRC(0x7700), lost: [lost.1.sequenceNumber]), from: viewer,
            rtcp: true)
        bed.run(for: .milliseconds(100))
        let repairs = zip(viewer.rtp, viewer.rtpHeaders).filter { $0.1.ssrc == SSRC(0x7701) }
        let counters = bed.routers[0].counters
        #expect(counters.dropped.repeatedSRTPIndex == 0)
        // Nothing else reached the viewer: the 10 packets and the repair.
        #expect(viewer.rtp.count == 10 + repairs.count)
        if viewerOffersRTX {
            // RFC 4588 section 4: RTX payload type, then the original
            // sequence number, then the original payload.
            #expect(repairs.count == 1)
            let repair = try #require(repairs.first)
            #expect(repair.1.payloadType.rawValue == Self.viewerRTX)
            let payload = Array(repair.0[repair.1.payloadRange])
            #expect(UInt16(payload[0]) << 8 | UInt16(payload[1]) == lost.1.sequenceNumber)
            #expect(Array(payload.dropFirst(2)) == Array(lost.0[lost.1.payloadRange]))
            #expect(counters.retransmissionsSent == 1)
            #expect(counters.nacksWithoutRTX == 0)
        } else {
            #expect(repairs.isEmpty)
            #expect(counters.retransmissionsSent == 0)
            #expect(counters.nacksWithoutRTX == 1)
        }
    }
}
