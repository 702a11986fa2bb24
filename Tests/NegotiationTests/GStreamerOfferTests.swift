import SDP
import Testing
import Wire

@testable import Negotiation

/// GStreamer 1.22 `webrtcbin`'s offers (captured by Scripts/capture-fixtures
/// through Scripts/interop/gst_webrtcbin.py). Under
/// `bundle-policy=max-bundle` its second section has port 0 and
/// `a=bundle-only`; under `max-compat` every section has a port; under
/// `none`, its default, there is no BUNDLE group and each section has its
/// own ICE credentials (a transport each), which we refuse
/// (docs/WHIP_WHEP.md, "BUNDLE is required"). webrtcbin reads the
/// fingerprint per section and refuses a whole answer if one section has
/// none, so our answers carry it at session level too (RFC 8122 section 5).
@Suite struct GStreamerOfferTests {
    static let ourFingerprint = Fingerprint(
        algorithm: Fixture.serverFingerprint.algorithm.rawValue, bytes: Fixture.serverFingerprint.digest)

    /// Every m-section of `answer` finds our fingerprint, at media level or
    /// inherited from the session (what webrtcbin checks, per section).
    static func expectFingerprintForEverySection(_ answer: SessionDescription) {
        #expect(answer.fingerprints == [ourFingerprint], "\(answer.text)")
        for m in answer.media {
            #expect(answer.transport(for: m).fingerprints == [ourFingerprint], "\(String(describing: m.mid))")
        }
    }

    @Test(arguments: [
        ("gstreamer-publish-vp8-max-bundle.sdp", [9, 0] as [UInt16], "VP8"),
        ("gstreamer-publish-vp8-max-compat.sdp", [9, 9], "VP8"),
        ("gstreamer-publish-h264-max-bundle.sdp", [9, 0], "H264"),
    ])
    func webrtcbinPublishOfferIsAnsweredOnOneBundledTransport(name: String, ports: [UInt16], video: String) throws {
        let description = try Fixture.description(name)
        #expect(description.media.map(\.port) == ports)
        #expect(description.media.map(\.mid) == ["video0", "audio1"])
        let remote = try RemoteTransportParameters(from: description, as: .offer)
        #expect(remote.bundle == ["video0", "audio1"])
        let offer = try PublishOffer(description)
        try #require(offer.tracks.count == 2, "\(offer.sections)")
        #expect(offer.tracks.map(\.kind) == [.video, .audio])
        // webrtcbin's sink pads make sendrecv transceivers: sending.
        #expect(offer.tracks.map(\.isSending) == [true, true])
        var answerer = PublishAnswerer(sessionID: 1)
        let answer = try SessionDescription.parse(answerer.makeAnswer(to: offer, local: Fixture.local).text)
        #expect(answer.bundleMIDs == ["video0", "audio1"])
        #expect(answer.media.map(\.port) == [40000, 40000])
        #expect(answer.media.map(\.direction) == [.recvonly, .recvonly])
        let rtpmap = answer.media[0].attributes.compactMap { if case .rtpmap(let r) = $0 { r } else { nil } }
        #expect(rtpmap.map(\.encodingName) == [video], "\(rtpmap)")
        Self.expectFingerprintForEverySection(answer)
    }

    /// x264's constrained baseline says `42c01f` (constraint_set0 and 1):
    /// the same profile as libwebrtc's `42e01f`, kept as offered, with
    /// packetization mode 1.
    @Test func webrtcbinH264OfferKeepsItsConstrainedBaselineProfile() throws {
        let offer = try PublishOffer(Fixture.description("gstreamer-publish-h264-max-bundle.sdp"))
        let video = try #require(offer.tracks.first)
        let fmtp = try #require(video.codecs.first?.formatParameters)
        #expect(fmtp.contains("packetization-mode=1") && fmtp.contains("profile-level-id=42c01f"), "\(fmtp)")
        #expect(H264ProfileLevelID("42c01f")?.profile == H264ProfileLevelID("42e01f")?.profile)
    }

    /// `bundle-policy=none`: no group, a ufrag per section. Refused with
    /// the reason naming the fix.
    @Test func webrtcbinOfferWithoutBundleIsRefusedWithAReason() throws {
        let description = try Fixture.description("gstreamer-publish-vp8-none.sdp")
        #expect(description.bundleMIDs == nil)
        let ufrags = Set(description.media.compactMap { description.transport(for: $0).iceUfrag })
        #expect(ufrags.count == 2)
        #expect(throws: NegotiationError.missingBundle) { try RemoteTransportParameters(from: description, as: .offer) }
        #expect(NegotiationError.missingBundle.reason.contains("max-bundle or max-compat"))
    }

    /// The regression: a section we reject (here audio offered with a codec
    /// we do not take) is answered with port 0, `a=mid` and `a=inactive`
    /// only (RFC 8829 section 5.3.1); webrtcbin refused such answers ("No
    /// fingerprint lines in sdp for media 1") until the fingerprint went to
    /// session level.
    @Test func answerWithARejectedSectionStillGivesItAFingerprint() throws {
        var description = try Fixture.description("gstreamer-publish-vp8-max-compat.sdp")
        description.media[1].attributes = description.media[1].attributes.map {
            if case .rtpmap(var r) = $0 {
                r.encodingName = "G729"
                r.clockRate = 8000
                r.channels = nil
                return .rtpmap(r)
            }
            return $0
        }
        let offer = try PublishOffer(description)
        #expect(offer.tracks.map(\.mid) == ["video0"])
        var answerer = PublishAnswerer(sessionID: 2)
        let answer = try SessionDescription.parse(answerer.makeAnswer(to: offer, local: Fixture.local).text)
        #expect(answer.media.map(\.port) == [40000, 0])
        #expect(answer.media[1].fingerprints.isEmpty)
        Self.expectFingerprintForEverySection(answer)
    }

    @Test(arguments: [
        ("gstreamer-recvonly-vp8-max-bundle.sdp", CodecDescription.vp8(payloadType: PayloadType(rawValue: 100)!), "96"),
        (
            "gstreamer-recvonly-h264-max-bundle.sdp",
            CodecDescription.h264(payloadType: PayloadType(rawValue: 100)!, profileLevelID: "42c01f"), "102"
        ),
    ])
    func webrtcbinRecvonlyOfferIsPlayedOnBothSections(name: String, video: CodecDescription, pt: String) throws {
        let description = try Fixture.description(name)
        #expect(description.media.map(\.port) == [9, 0])
        let offer = try PlaybackOffer(description)
        #expect(offer.receivingSections.map(\.kind) == [.audio, .video])
        var answerer = PlaybackAnswerer(sessionID: 3)
        let opus = CodecDescription.opus(payloadType: PayloadType(rawValue: 109)!, formatParameters: nil)
        let answer = answerer.makeAnswer(
            to: offer,
            sources: [
                PlaybackSource(trackID: "TR_v", streamID: "PA", codec: video, ssrc: SSRC(0x11), cname: "c"),
                PlaybackSource(trackID: "TR_a", streamID: "PA", codec: opus, ssrc: SSRC(0x21), cname: "c"),
            ], local: Fixture.local)
        let parsed = try SessionDescription.parse(answer.description.text)
        #expect(answer.assignments.map(\.mid) == ["audio0", "video1"])
        // webrtcbin's own payload types: Opus 111, video 96 or 102.
        #expect(parsed.media.map(\.formats) == [["111"], [pt]])
        #expect(parsed.media.map(\.port) == [40000, 40000])
        #expect(parsed.media.map(\.direction) == [.sendonly, .sendonly])
        #expect(parsed.bundleMIDs == ["audio0", "video1"])
        Self.expectFingerprintForEverySection(parsed)
    }
}
