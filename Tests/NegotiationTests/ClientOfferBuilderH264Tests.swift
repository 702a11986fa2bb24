import DTLS
import ICE
import RTP
import SDP
import Testing
import Wire

@testable import Negotiation

/// roombot `--video-codec h264`: the offers carry H.264 constrained
/// baseline, packetization mode 1, with RTX, in place of VP8, and the
/// server takes it.
@Suite struct ClientOfferBuilderH264Tests {
    static let local = LocalTransportParameters(
        credentials: ICECredentials(ufrag: "BotU", password: "botpasswordbotpasswordbo"),
        fingerprint: CertificateFingerprint(algorithm: .sha256, digest: Array(repeating: 0xB0, count: 32))!,
        candidates: [ICECandidate.host(TransportAddress(ipv4: 127, 0, 0, 1, port: 50001))], isICELite: false)

    @Test func publishOfferCarriesH264WithRTXAndTheServerAnswersIt() throws {
        var builder = ClientOfferBuilder(sessionID: 42, local: Self.local)
        builder.videoCodec = ClientOfferBuilder.h264
        let publication = ClientPublication(
            audioSSRC: SSRC(1000),
            videoLayers: [
                .init(rid: "q", ssrc: SSRC(2000), rtxSSRC: SSRC(2001)), .init(rid: "h", ssrc: SSRC(2010), rtxSSRC: SSRC(2011)),
            ], streamID: "bot-1", cname: "bot-1-cname")
        let offer = try SessionDescription.parse(builder.publishOffer(publication).text)
        let video = try #require(offer.media.last)
        #expect(video.formats == ["96", "97"])
        #expect(video.rtpMaps.map(\.encodingName) == ["H264", "rtx"])
        #expect(
            video.formatParameters.map { "\($0.payloadType.rawValue) \($0.raw)" } == [
                "96 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f", "97 apt=96",
            ])

        var answerer = PublishAnswerer(sessionID: 9)
        let answer = try SessionDescription.parse(answerer.makeAnswer(to: try PublishOffer(offer), local: Fixture.local).text)
        let agreed = try builder.applyAnswer(answer, to: offer)
        #expect(agreed.sections.map(\.accepted) == [true, true])
        #expect(answer.media.last?.rtpMaps.map(\.encodingName) == ["H264", "rtx"])
    }

    @Test func playbackOfferAsksForH264() throws {
        var builder = ClientOfferBuilder(sessionID: 7, local: Self.local)
        builder.videoCodec = ClientOfferBuilder.h264
        let offer = builder.playbackOffer()
        #expect(offer.media.map { $0.rtpMaps.map(\.encodingName) } == [["opus"], ["H264", "rtx"]])
        #expect(offer.media.last?.direction == .recvonly)
    }
}
