import RTP
import SDP
import Testing
import Wire

@testable import Negotiation

/// A WHEP viewer's header extensions (issue #14): the answer carries the
/// extensions the worker writes, under the viewer's ids, and tells the
/// worker those ids; without them the viewer ignores our transport-wide
/// sequence numbers and sends no transport-cc feedback.
@Suite struct PlaybackAnswererExtensionTests {
    static func answer(_ text: String) throws -> PlaybackAnswer {
        try answer(SessionDescription.parse(text))
    }

    static func answer(_ offer: SessionDescription) throws -> PlaybackAnswer {
        var answerer = PlaybackAnswerer(sessionID: 7)
        return answerer.makeAnswer(
            to: try PlaybackOffer(offer),
            sources: [
                PlaybackSource(
                    trackID: "TR_v", streamID: "PA_pub", codec: PlaybackAnswererTests.vp8, ssrc: SSRC(0x1111),
                    rtxSSRC: SSRC(0x1112), cname: "swiftlet"),
                PlaybackSource(
                    trackID: "TR_a", streamID: "PA_pub", codec: PlaybackAnswererTests.opus, ssrc: SSRC(0x2222),
                    cname: "swiftlet"),
            ],
            local: Fixture.local)
    }

    @Test func answersTheViewersTransportCCAndAbsSendTimeIds() throws {
        let answer = try Self.answer(Fixture.text("chromium-recvonly.sdp"))
        #expect(answer.headerExtensions.transportWideSequenceNumber == 3)
        #expect(answer.headerExtensions.absoluteSendTime == 2)
        #expect(answer.headerExtensions.absoluteCaptureTime == nil)
        for m in answer.description.media {
            let answered = m.extensionMaps.map { "\($0.id) \($0.uri)" }.sorted()
            #expect(
                answered == [
                    "2 \(HeaderExtensionURI.absoluteSendTime)", "3 \(HeaderExtensionURI.transportWideSequenceNumber)",
                ])
        }
    }

    @Test func keepsIdsTheViewerChoseAndSkipsOnesItCannotReceive() throws {
        var text = try Fixture.text("chromium-recvonly.sdp")
        text = text.replacing(
            "a=extmap:3 http://www.ietf.org/id/draft-holmer", with: "a=extmap:9 http://www.ietf.org/id/draft-holmer")
        // Sent only by the viewer: not ours to write.
        text = text.replacing("a=extmap:2 http://www.webrtc", with: "a=extmap:2/sendonly http://www.webrtc")
        let answer = try Self.answer(text)
        #expect(answer.headerExtensions.transportWideSequenceNumber == 9)
        #expect(answer.headerExtensions.absoluteSendTime == nil)
        #expect(answer.description.media.allSatisfy { $0.extensionMaps.map(\.id) == [9] })
    }

    @Test func anOfferWithoutExtensionsGetsNone() throws {
        let offer = Fixture.removing(
            { if case .extmap = $0 { true } else { false } }, from: try Fixture.description("chromium-recvonly.sdp"))
        let answer = try Self.answer(offer)
        #expect(answer.headerExtensions == HeaderExtensionIDs())
        #expect(answer.description.media.allSatisfy { $0.extensionMaps.isEmpty })
    }
}
