import DTLS
import ICE
import SDP
import Testing
import Wire

@testable import Negotiation

@Suite struct PublishAnswererTests {
    @Test func answersChromiumSimulcastWithRecvRidsAndServerTransport() throws {
        let offer = try PublishOffer(Fixture.description("chromium-publish-simulcast.sdp"))
        var answerer = PublishAnswerer(sessionID: 0xFFFF_0000_0000_0001)
        let built = answerer.makeAnswer(to: offer, local: Fixture.local)
        let answer = try SessionDescription.parse(built.text)
        #expect(answer == built)

        #expect(answer.origin.sessionID == 0x7FFF_0000_0000_0001)
        #expect(answer.origin.sessionVersion == 1)
        #expect(answer.sessionName == "-")
        #expect(answer.timing == [Timing(start: 0, stop: 0)])
        #expect(
            answer.attributes == [
                .group(Group(semantics: "BUNDLE", mids: ["0", "1"])), .iceLite,
                .fingerprint(Fingerprint(algorithm: "sha-256", bytes: Fixture.serverFingerprint.digest)),
                .extmapAllowMixed, .msidSemantic(MSIDSemantic()),
            ])
        #expect(answer.media.map(\.mid) == ["0", "1"])
        #expect(answer.media.map(\.direction) == [.recvonly, .recvonly])
        #expect(answer.media.map(\.port) == [40000, 40000])
        #expect(answer.media[0].formats == ["111"])
        #expect(answer.media[1].formats == ["96", "97"])

        for m in answer.media {
            #expect(m.has(.setup(.passive)))
            #expect(m.has(.rtcpMux))
            #expect(m.has(.rtcpReducedSize))
            #expect(m.fingerprints == [Fingerprint(algorithm: "sha-256", bytes: Array(0..<32))])
            #expect(m.iceUfrag == "SfuU")
            #expect(m.icePwd == "0123456789abcdefghijklmn")
            #expect(!m.has(.iceLite))
        }
        // Candidates only in the BUNDLE-tagged (first) section.
        #expect(answer.media[0].candidates.map(\.address) == ["192.0.2.10"])
        #expect(answer.media[0].candidates.map(\.port) == [40000])
        #expect(answer.media[0].has(.endOfCandidates))
        #expect(answer.media[1].candidates.isEmpty)

        let video = answer.media[1]
        #expect(
            video.rids == [
                RIDDescription(id: "q", direction: .recv), RIDDescription(id: "h", direction: .recv),
                RIDDescription(id: "f", direction: .recv),
            ])
        #expect(video.simulcast?.recvRIDs == ["q", "h", "f"])
        #expect(video.simulcast?.send.isEmpty == true)
        #expect(video.extensionMaps.map(\.id) == [2, 13, 3, 4, 10, 11])
        #expect(video.rtpMaps.map(\.encodingName) == ["VP8", "rtx"])
        #expect(video.formats == ["96", "97"])
        #expect(video.formatParameters.map(\.value) == ["97 apt=96"])
        #expect(
            video.rtcpFeedback.filter { $0.payloadType?.rawValue == 96 }.map(\.value) == [
                "96 goog-remb", "96 transport-cc", "96 ccm fir", "96 nack", "96 nack pli",
            ])
        #expect(
            answer.media[0].extensionMaps.map(\.uri) == [
                "urn:ietf:params:rtp-hdrext:ssrc-audio-level", "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
                "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
                "urn:ietf:params:rtp-hdrext:sdes:mid",
            ])

        // What the client reads back from it is our transport.
        // (Our own description says passive, which RemoteTransportParameters refuses.)
        #expect(throws: NegotiationError.setupRoleConflict(mid: "0", .passive)) {
            try RemoteTransportParameters(from: answer, as: .offer)
        }
        #expect(answer.media[0].candidates.compactMap(ICECandidate.init(sdp:)) == [ICECandidate.host(Fixture.serverAddress)])
        let fp = try #require(answer.transport(for: answer.media[1]).fingerprints.first)
        #expect(CertificateFingerprint(sdpValue: fp.value) == Fixture.serverFingerprint)
    }

    @Test func answerVersionCountsUp() throws {
        let offer = try PublishOffer(Fixture.description("aiortc-offer.sdp"))
        var answerer = PublishAnswerer(sessionID: 42)
        #expect(answerer.makeAnswer(to: offer, local: Fixture.local).origin.sessionVersion == 1)
        let second = answerer.makeAnswer(to: offer, local: Fixture.local)
        #expect(second.origin == Origin(sessionID: 42, sessionVersion: 2))
    }

    @Test func answersAiortcOpusWithoutFmtp() throws {
        let offer = try PublishOffer(Fixture.description("aiortc-offer.sdp"))
        var answerer = PublishAnswerer(sessionID: 1)
        let answer = try SessionDescription.parse(answerer.makeAnswer(to: offer, local: Fixture.local).text)
        // aiortc reads a=ice-lite only at session level.
        #expect(answer.isICELite)
        #expect(!answer.attributes.contains(.extmapAllowMixed))
        #expect(answer.media[0].formats == ["96"])
        #expect(
            answer.media[0].rtpMaps == [
                RTPMap(payloadType: PayloadType(rawValue: 96)!, encodingName: "opus", clockRate: 48000, channels: 2)
            ])
        #expect(answer.media[0].formatParameters.isEmpty)
        #expect(!answer.media[0].has(.rtcpReducedSize))
        #expect(answer.media[1].formats == ["97", "98"])
        #expect(answer.media[1].simulcast == nil)
        #expect(answer.media[1].rids.isEmpty)
    }

    @Test func rejectsDataChannelWithPortZeroOutsideBundle() throws {
        let offer = try PublishOffer(Fixture.description("chromium-sendrecv.sdp"))
        var answerer = PublishAnswerer(sessionID: 1)
        let answer = try SessionDescription.parse(answerer.makeAnswer(to: offer, local: Fixture.local).text)
        #expect(answer.bundleMIDs == ["0", "1"])
        #expect(answer.media.count == 3)
        let data = answer.media[2]
        #expect(data.port == 0)
        #expect(data.mediaLine == "application 0 UDP/DTLS/SCTP webrtc-datachannel")
        #expect(data.attributes == [.mid("2")])
        #expect(answer.media[0].direction == .recvonly)
    }

    @Test func idleSectionIsAnsweredInactiveButKeptInBundle() throws {
        var d = try Fixture.description("chromium-sendrecv.sdp")
        d.media[0].attributes = d.media[0].attributes.map { $0 == .direction(.sendrecv) ? .direction(.recvonly) : $0 }
        let offer = try PublishOffer(d)
        #expect(offer.tracks.map(\.mid) == ["1"])
        var answerer = PublishAnswerer(sessionID: 1)
        let answer = answerer.makeAnswer(to: offer, local: Fixture.local)
        #expect(answer.media[0].direction == .inactive)
        #expect(answer.media[0].port == 40000)
        #expect(answer.bundleMIDs == ["0", "1"])
    }
}
