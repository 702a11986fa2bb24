import SDP
import Testing
import Wire

@testable import Negotiation

/// Firefox ESR's offers (captured by Scripts/capture-fixtures): under
/// `bundlePolicy: "max-bundle"` every m-section after the first has port 0
/// and `a=bundle-only` (RFC 8843 section 6). Such a section is bundled,
/// not rejected: accepted when its mid is in the BUNDLE group, and
/// answered like any bundled section (RFC 8829 section 5.3.1: port of the
/// BUNDLE transport, no `a=bundle-only` in an answer). Port 0 without
/// `a=bundle-only`, or outside the group, is still rejected.
@Suite struct BundleOnlyTests {
    static let maxBundle = "firefox-publish-simulcast-max-bundle.sdp"

    @Test func firefoxMaxBundlePublishOfferKeepsItsBundleOnlyVideo() throws {
        let description = try Fixture.description(Self.maxBundle)
        #expect(description.media.map(\.port) == [9, 0])
        #expect(description.media[1].isBundleOnly)
        let offer = try PublishOffer(description)
        let tracks = offer.tracks
        try #require(tracks.count == 2, "\(offer.sections)")
        #expect(tracks.map(\.mid) == ["0", "1"])
        let video = tracks[1]
        #expect(video.kind == .video)
        #expect(video.simulcast.map(\.rid) == ["q", "h", "f"])
        // VP8 on Firefox's 120 with RTX 124 (VP9, AV1, RED, ULPFEC dropped).
        #expect(video.codecs.map(\.payloadType.rawValue) == [120])
        #expect(video.codecs.map { $0.rtxPayloadType?.rawValue } == [124])
        #expect(video.headerExtensions.rtpStreamID == 9)
        #expect(video.headerExtensions.mid == 3)

        var answerer = PublishAnswerer(sessionID: 1)
        let answer = try SessionDescription.parse(answerer.makeAnswer(to: offer, local: Fixture.local).text)
        #expect(answer.bundleMIDs == ["0", "1"])
        // Both on the BUNDLE transport's port; no bundle-only in answers.
        #expect(answer.media.map(\.port) == [40000, 40000])
        #expect(answer.media.allSatisfy { !$0.isBundleOnly && !$0.isRejected })
        #expect(answer.media.map(\.direction) == [.recvonly, .recvonly])
        #expect(answer.media[1].rids.map(\.id) == ["q", "h", "f"])
        #expect(answer.media[0].candidates.count == 1)
        #expect(answer.media[1].candidates.isEmpty)
    }

    /// The same camera under `balanced` (each section with its own port)
    /// is analysed to the same tracks.
    @Test func balancedAndMaxBundleOffersYieldTheSameTracks() throws {
        let balanced = try PublishOffer(Fixture.description("firefox-publish-simulcast-balanced.sdp")).tracks
        let maxBundle = try PublishOffer(Fixture.description(Self.maxBundle)).tracks
        #expect(balanced.map(\.kind) == [.audio, .video])
        #expect(balanced.map(\.kind) == maxBundle.map(\.kind))
        #expect(balanced.map(\.codecs) == maxBundle.map(\.codecs))
        #expect(balanced.map(\.simulcast) == maxBundle.map(\.simulcast))
    }

    @Test func firefoxMaxBundleRecvonlyOfferIsPlayedOnBothSections() throws {
        let offer = try PlaybackOffer(Fixture.description("firefox-recvonly-max-bundle.sdp"))
        #expect(offer.receivingSections.map(\.kind) == [.audio, .video])
        var answerer = PlaybackAnswerer(sessionID: 2)
        let vp8 = CodecDescription.vp8(payloadType: PayloadType(rawValue: 96)!, rtxPayloadType: PayloadType(rawValue: 97)!)
        let opus = CodecDescription.opus(payloadType: PayloadType(rawValue: 111)!, formatParameters: nil)
        let answer = answerer.makeAnswer(
            to: offer,
            sources: [
                PlaybackSource(trackID: "TR_v", streamID: "PA", codec: vp8, ssrc: SSRC(0x11), rtxSSRC: SSRC(0x12), cname: "c"),
                PlaybackSource(trackID: "TR_a", streamID: "PA", codec: opus, ssrc: SSRC(0x21), rtxSSRC: nil, cname: "c"),
            ], local: Fixture.local)
        let parsed = try SessionDescription.parse(answer.description.text)
        #expect(answer.assignments.map(\.mid) == ["0", "1"])
        // Firefox's own payload types: Opus 109, VP8 120 with RTX 124.
        #expect(parsed.media.map(\.formats) == [["109"], ["120", "124"]])
        #expect(parsed.media.map(\.port) == [40000, 40000])
        #expect(parsed.media.map(\.direction) == [.sendonly, .sendonly])
        #expect(parsed.bundleMIDs == ["0", "1"])
    }

    /// Port 0 without `a=bundle-only` is the offerer disabling the section
    /// (RFC 8843 section 7.5.3): rejected, port 0 in the answer, out of
    /// the group.
    @Test func portZeroWithoutBundleOnlyIsStillRejected() throws {
        let disabled = Fixture.removing({ $0 == .bundleOnly }, from: try Fixture.description(Self.maxBundle))
        let offer = try PublishOffer(disabled)
        #expect(offer.tracks.map(\.mid) == ["0"])
        guard case .rejected(let r) = offer.sections[1] else {
            Issue.record("video accepted: \(offer.sections[1])")
            return
        }
        #expect(r.reason == .rejectedByOfferer)
        var answerer = PublishAnswerer(sessionID: 3)
        let answer = answerer.makeAnswer(to: offer, local: Fixture.local)
        #expect(answer.media.map(\.port) == [40000, 0])
        #expect(answer.bundleMIDs == ["0"])
    }

    /// A bundle-only section whose mid the BUNDLE group leaves out cannot
    /// be bundled, and we run one transport: rejected.
    @Test func bundleOnlySectionOutsideTheGroupIsRejected() throws {
        var description = try Fixture.description(Self.maxBundle)
        description.attributes = description.attributes.map {
            if case .group(let g) = $0, g.semantics == Group.bundle {
                .group(Group(semantics: g.semantics, mids: ["0"]))
            } else {
                $0
            }
        }
        let offer = try PublishOffer(description)
        #expect(offer.tracks.map(\.mid) == ["0"])
        guard case .rejected(let r) = offer.sections[1] else {
            Issue.record("video accepted: \(offer.sections[1])")
            return
        }
        #expect(r.reason == .notBundled)
    }

    /// A subscriber's answer written the RFC 8843 section 7.3 way (every
    /// bundled section but the tagged one with port 0 and `a=bundle-only`)
    /// is an answer accepting every section.
    @Test func subscriberAnswerWithBundleOnlySectionsIsAccepted() throws {
        var b = SubscriberOfferBuilder(sessionID: 9, local: Fixture.local)
        let opus = CodecDescription.opus(payloadType: PayloadType(rawValue: 111)!)
        let vp8 = CodecDescription.vp8(payloadType: PayloadType(rawValue: 96)!, rtxPayloadType: PayloadType(rawValue: 97)!)
        try b.add(track: OutgoingTrack(kind: .audio, codec: opus, ssrc: SSRC(1), streamID: "s", trackID: "a", cname: "c"))
        try b.add(
            track: OutgoingTrack(
                kind: .video, codec: vp8, ssrc: SSRC(2), rtxSSRC: SSRC(3), streamID: "s", trackID: "v", cname: "c"))
        var answer = chromiumAnswer(to: try b.createOffer())
        answer.media[1].port = 0
        answer.media[1].attributes.append(.bundleOnly)
        let transport = try b.applyAnswer(answer)
        #expect(transport.bundle == ["0", "1"])
        #expect(b.state == .stable)
    }
}
