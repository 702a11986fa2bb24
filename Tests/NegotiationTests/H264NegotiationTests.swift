import SDP
import Testing
import Wire

@testable import Negotiation

/// H.264 as a publisher's codec and a player's (RFC 6184 sections 8.1 and
/// 8.2.2), from Chromium's real offer with H.264 first and from the fmtp
/// lines Safari offers.
@Suite struct H264NegotiationTests {
    static let h264First = "chromium-publish-h264-simulcast.sdp"

    /// The fixture's video section with the fmtp of each payload type in
    /// `profiles` set to that profile-level-id (mode 1 kept).
    static func video(profiles: [UInt8: String]) throws -> MediaDescription {
        var m = try Fixture.description(h264First).media[1]
        for (i, a) in m.attributes.enumerated() {
            guard case .fmtp(var f) = a, let id = profiles[f.payloadType.rawValue] else { continue }
            f.raw = "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=\(id)"
            m.attributes[i] = .fmtp(f)
        }
        return m
    }

    @Test func chromiumOfferWithH264FirstIsAnsweredWithH264Alone() throws {
        let offer = try PublishOffer(Fixture.description(Self.h264First))
        let video = try #require(offer.tracks.first { $0.kind == .video })
        // 108 is mode 1 42e01f with RTX 109; VP8 (96) comes later and is
        // not answered: one video codec per section.
        #expect(video.codecs.map(\.codec) == [.video(.h264)])
        #expect(video.codecs.map(\.payloadType.rawValue) == [108])
        #expect(video.codecs.map { $0.rtxPayloadType?.rawValue } == [109])
        #expect(video.simulcast.map(\.rid.description) == ["q", "h", "f"])

        var answerer = PublishAnswerer(sessionID: 1)
        let answer = try SessionDescription.parse(answerer.makeAnswer(to: offer, local: Fixture.local).text)
        let m = answer.media[1]
        #expect(m.formats == ["108", "109"])
        #expect(m.rtpMaps.map(\.encodingName) == ["H264", "rtx"])
        // RFC 6184 section 8.2.2: the offer's profile, the same
        // packetization mode, and (we take any level) its level.
        let fmtp = try #require(m.formatParameters.first { $0.payloadType.rawValue == 108 })
        #expect(fmtp["profile-level-id"] == "42e01f")
        #expect(fmtp["packetization-mode"] == "1")
        #expect(fmtp["level-asymmetry-allowed"] == "1")
        #expect(m.rids.map(\.id.description) == ["q", "h", "f"])
        #expect(
            m.rtcpFeedback.filter { $0.payloadType?.rawValue == 108 }.map(\.value) == [
                "108 goog-remb", "108 transport-cc", "108 ccm fir", "108 nack", "108 nack pli",
            ])
    }

    @Test func safariProfilesPickConstrainedBaselineWhereverItStands() throws {
        // Safari's order: Constrained High 640c1f first, then 42e01f.
        let safari = try Self.video(profiles: [108: "640c1f", 102: "42e01f", 116: "4d001f"])
        let chosen = PublishOffer.acceptedCodecs(safari, kind: .video)
        #expect(chosen.map(\.payloadType.rawValue) == [102])
        #expect(chosen.first?.h264ProfileLevelID?.profile == .constrainedBaseline)
        // Another Constrained Baseline spelling (Main with constraint_set0).
        let other = try Self.video(profiles: [108: "640c1f", 102: "4de01f", 116: "4d001f"])
        #expect(PublishOffer.acceptedCodecs(other, kind: .video).map(\.payloadType.rawValue) == [102])
        // Without one, the first mode-1 entry: forwarded to receivers of
        // its profile only.
        let high = try Self.video(profiles: [108: "640c1f", 102: "4d001f", 116: "4d001f"])
        #expect(PublishOffer.acceptedCodecs(high, kind: .video).map(\.payloadType.rawValue) == [108])
    }

    @Test func profilesAreReadAsRFC6184Table5ReadsThem() {
        func profile(_ text: String) -> H264ProfileLevelID.Profile? { H264ProfileLevelID(Substring(text))?.profile }
        #expect(profile("42e01f") == .constrainedBaseline)
        #expect(profile("42E01F") == .constrainedBaseline)
        #expect(profile("42c01f") == .constrainedBaseline)
        #expect(profile("4de01f") == .constrainedBaseline)
        #expect(profile("58c01f") == .constrainedBaseline)
        #expect(profile("42001f") == .baseline)
        #expect(profile("58801f") == .baseline)
        #expect(profile("4d001f") == .main)
        #expect(profile("58001f") == .extended)
        #expect(profile("64001f") == .high)
        #expect(profile("640c1f") == .constrainedHigh)
        #expect(profile("f4001f") == .highBitDepthOrChroma(profileIDC: 0xF4))
        // Reserved bits, unknown combinations, not six hex digits.
        #expect(profile("42e11f") == nil)
        #expect(profile("64081f") == nil)
        #expect(profile("4d201f") == nil)
        #expect(profile("58401f") == nil)
        #expect(profile("ff001f") == nil)
        #expect(H264ProfileLevelID(Substring("42e01")) == nil)
        #expect(H264ProfileLevelID(Substring("42e01g")) == nil)
        #expect(H264ProfileLevelID(Substring("+2e01f")) == nil)
        #expect(H264ProfileLevelID(Substring("42e01f"))?.levelIDC == 0x1F)
        #expect(H264ProfileLevelID.default.profile == .baseline)
    }

    @Test func playersGetTheStreamsTheirDecodersTake() throws {
        // Chromium's recvonly offer: mode-1 42001f, 42e01f, 4d001f, f4001f.
        let offer = try PlaybackOffer(Fixture.description("chromium-recvonly.sdp"))
        var answerer = PlaybackAnswerer(sessionID: 7)
        func placed(_ profile: String) -> [UInt8] {
            let codec = CodecDescription.h264(payloadType: PayloadType(rawValue: 99)!, profileLevelID: profile)
            let source = PlaybackSource(trackID: "TR", streamID: "PA", codec: codec, ssrc: SSRC(1), cname: "c")
            return answerer.makeAnswer(to: offer, sources: [source], local: Fixture.local).assignments.map {
                $0.track.codec.payloadType.rawValue
            }
        }
        // Each of Safari's four profiles: Constrained Baseline goes on the
        // 42e01f entry (its own profile before Baseline's, which also
        // decodes it), Baseline and Main on theirs, Constrained High on
        // none: Chromium here decodes no High profile but 4:4:4.
        #expect(placed("42e01f") == [108])
        #expect(placed("42001f") == [102])
        #expect(placed("4d001f") == [116])
        #expect(placed("640c1f") == [])
    }
}
