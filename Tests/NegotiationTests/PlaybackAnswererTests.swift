import SDP
import Testing
import Wire

@testable import Negotiation

@Suite struct PlaybackAnswererTests {
    static let opus = CodecDescription.opus(payloadType: PayloadType(rawValue: 96)!, formatParameters: nil)
    static let vp8 = CodecDescription.vp8(payloadType: PayloadType(rawValue: 97)!, rtxPayloadType: PayloadType(rawValue: 98)!)

    static func source(_ id: String, _ codec: CodecDescription, ssrc: UInt32, rtx: UInt32? = nil) -> PlaybackSource {
        PlaybackSource(
            trackID: id, streamID: "PA_pub", codec: codec, ssrc: SSRC(ssrc), rtxSSRC: rtx.map { SSRC($0) },
            cname: "swiftlet")
    }

    @Test func answersChromiumRecvonlyOfferWithTheClientsPayloadTypes() throws {
        let offer = try PlaybackOffer(Fixture.description("chromium-recvonly.sdp"))
        #expect(offer.receivingSections.map(\.kind) == [.audio, .video])
        // Opus; VP8 and every H264 mode-1 entry (VP9/AV1/mode 0 dropped).
        #expect(offer.receivingSections[0].codecs.map(\.payloadType.rawValue) == [111])
        #expect(offer.receivingSections[1].codecs.map(\.payloadType.rawValue) == [96, 102, 108, 116, 41])

        var answerer = PlaybackAnswerer(sessionID: 7)
        let answer = answerer.makeAnswer(
            to: offer,
            sources: [
                Self.source("TR_v", Self.vp8, ssrc: 0x1111, rtx: 0x1112),
                Self.source("TR_a", Self.opus, ssrc: 0x2222, rtx: 0x2223),
            ],
            local: Fixture.local)
        #expect(answer.assignments.map(\.mid) == ["0", "1"])
        #expect(answer.assignments.map(\.track.trackID) == ["TR_a", "TR_v"])
        #expect(answer.assignments.map(\.track.codec.payloadType.rawValue) == [111, 96])
        #expect(answer.assignments.map(\.track.ssrc) == [SSRC(0x2222), SSRC(0x1111)])
        // Chromium offers RTX for VP8 (97, apt=96): kept with its number,
        // on our RTX SSRC. It offers none for Opus: none answered.
        #expect(answer.assignments.map(\.track.codec.rtxPayloadType?.rawValue) == [nil, 97])
        #expect(answer.assignments.map(\.track.rtxSSRC) == [nil, SSRC(0x1112)])

        let parsed = try SessionDescription.parse(answer.description.text)
        #expect(parsed == answer.description)
        #expect(parsed.origin.sessionVersion == 1)
        #expect(parsed.attributes.contains(.iceLite))
        #expect(parsed.bundleMIDs == ["0", "1"])
        #expect(parsed.media.map(\.direction) == [.sendonly, .sendonly])
        #expect(parsed.media.map(\.formats) == [["111"], ["96", "97"]])
        for m in parsed.media {
            #expect(m.has(.setup(.passive)))
            #expect(m.has(.rtcpMux))
            #expect(m.iceUfrag == "SfuU")
            // The extensions the worker writes, under Chromium's ids
            // (PlaybackAnswererExtensionTests).
            #expect(m.extensionMaps.map(\.id).sorted() == [2, 3])
        }
        #expect(parsed.media[0].candidates.map(\.port) == [40000])
        #expect(parsed.media[1].candidates.isEmpty)
        #expect(parsed.media[0].sourceAttribute("cname", of: SSRC(0x2222)) == "swiftlet")
        #expect(parsed.media[1].sourceAttribute("msid", of: SSRC(0x1111)) == "PA_pub TR_v")
        #expect(parsed.media[1].msid == MediaStreamID(streamID: "PA_pub", trackID: "TR_v"))
        // RFC 4588 section 8.6 and RFC 5576 section 4.2: the RTX payload
        // type names its codec, and FID pairs media then RTX, both signalled.
        let video = parsed.media[1]
        #expect(video.rtpMaps.contains(RTPMap(payloadType: PayloadType(rawValue: 97)!, encodingName: "rtx", clockRate: 90000)))
        #expect(video.formatParameters.first { $0.payloadType.rawValue == 97 }?["apt"] == "96")
        #expect(video.sourceGroups == [SourceGroup(semantics: "FID", ssrcs: [SSRC(0x1111), SSRC(0x1112)])])
        #expect(video.sourceAttribute("cname", of: SSRC(0x1112)) == "swiftlet")
        #expect(video.sourceAttribute("msid", of: SSRC(0x1112)) == "PA_pub TR_v")
        #expect(parsed.media[0].sourceGroups.isEmpty)
        #expect(parsed.media[0].sourceAttribute("cname", of: SSRC(0x2223)) == nil)
    }

    @Test func anOfferWithoutRTXIsAnsweredWithoutRTX() throws {
        let noRTX = try Fixture.removing(
            { a in
                switch a {
                case .rtpmap(let m): m.encodingName.lowercased() == "rtx"
                case .fmtp(let f): f["apt"] != nil
                default: false
                }
            }, from: try Fixture.description("chromium-recvonly.sdp"))
        let offer = try PlaybackOffer(noRTX)
        var answerer = PlaybackAnswerer(sessionID: 7)
        let answer = answerer.makeAnswer(
            to: offer, sources: [Self.source("TR_v", Self.vp8, ssrc: 0x1111, rtx: 0x1112)], local: Fixture.local)
        #expect(answer.assignments.map(\.track.codec.rtxPayloadType) == [nil])
        #expect(answer.assignments.map(\.track.rtxSSRC) == [nil])
        let video = try SessionDescription.parse(answer.description.text).media[1]
        #expect(video.formats == ["96"])
        #expect(video.sourceGroups.isEmpty)
        #expect(video.sourceAttributes.map(\.ssrc) == [SSRC(0x1111), SSRC(0x1111)])

        // A source without an RTX SSRC gets none either, whatever the offer.
        let withRTX = try PlaybackOffer(Fixture.description("chromium-recvonly.sdp"))
        let plain = answerer.makeAnswer(to: withRTX, sources: [Self.source("TR_v", Self.vp8, ssrc: 0x1111)], local: Fixture.local)
        #expect(plain.assignments.map(\.track.codec.rtxPayloadType) == [nil])
        #expect(plain.description.media[1].formats == ["96"])
        #expect(plain.description.media[1].sourceGroups.isEmpty)
    }

    @Test func sectionsWithoutAFittingSourceAreInactiveAndStillBundled() throws {
        let offer = try PlaybackOffer(Fixture.description("chromium-recvonly.sdp"))
        var answerer = PlaybackAnswerer(sessionID: 7)
        let answer = answerer.makeAnswer(to: offer, sources: [Self.source("TR_a", Self.opus, ssrc: 5)], local: Fixture.local)
        #expect(answer.assignments.map(\.mid) == ["0"])
        let video = answer.description.media[1]
        #expect(video.direction == .inactive)
        #expect(video.port == 40000)
        #expect(video.formats == ["96"])
        #expect(video.sourceAttributes.isEmpty)
        #expect(answer.description.bundleMIDs == ["0", "1"])
        #expect(answerer.makeAnswer(to: offer, sources: [], local: Fixture.local).description.origin.sessionVersion == 2)
    }

    @Test func h264IsPlacedOnlyOnACompatibleProfile() throws {
        let offer = try PlaybackOffer(Fixture.description("chromium-recvonly.sdp"))
        var answerer = PlaybackAnswerer(sessionID: 7)
        let main = CodecDescription.h264(payloadType: PayloadType(rawValue: 99)!, profileLevelID: "4d0032")
        #expect(
            answerer.makeAnswer(to: offer, sources: [Self.source("TR_m", main, ssrc: 1)], local: Fixture.local).assignments.map(
                \.track.codec.payloadType.rawValue) == [116])
        let constrained = CodecDescription.h264(payloadType: PayloadType(rawValue: 99)!, profileLevelID: "42e034")
        #expect(
            answerer.makeAnswer(to: offer, sources: [Self.source("TR_c", constrained, ssrc: 1)], local: Fixture.local)
                .assignments.map(\.track.codec.payloadType.rawValue) == [108])
        let high = CodecDescription.h264(payloadType: PayloadType(rawValue: 99)!, profileLevelID: "640032")
        #expect(
            answerer.makeAnswer(to: offer, sources: [Self.source("TR_h", high, ssrc: 1)], local: Fixture.local).assignments
                .isEmpty)
    }

    @Test func codecCompatibilityTable() {
        func h264(_ plid: String?, mode: String = "1") -> CodecDescription {
            var c = CodecDescription.h264(payloadType: PayloadType(rawValue: 100)!)
            c.formatParameters = "packetization-mode=\(mode)" + (plid.map { ";profile-level-id=\($0)" } ?? "")
            return c
        }
        #expect(Self.opus.canBeDecoded(by: .opus(payloadType: PayloadType(rawValue: 111)!)))
        #expect(!Self.opus.canBeDecoded(by: Self.vp8))
        #expect(Self.vp8.canBeDecoded(by: .vp8(payloadType: PayloadType(rawValue: 120)!)))
        #expect(h264("42e01f").canBeDecoded(by: h264("42e034")))
        // A Constrained Baseline stream is a Baseline one (H.264 A.2.1.1),
        // not the other way round.
        #expect(h264("42e01f").canBeDecoded(by: h264("42001f")))
        #expect(!h264("42001f").canBeDecoded(by: h264("42e01f")))
        #expect(h264(nil).canBeDecoded(by: h264("42001f")))
        #expect(!h264("42e01f").canBeDecoded(by: h264("42e01f", mode: "0")))
        // High decoders take Main; Main decoders do not take High.
        #expect(h264("4d001f").canBeDecoded(by: h264("64001f")))
        #expect(!h264("64001f").canBeDecoded(by: h264("4d001f")))
        #expect(!h264("zz").canBeDecoded(by: h264("zz")))
    }

    @Test func refusesOffersThatReceiveNothing() throws {
        #expect(throws: NegotiationError.nothingToPlay) {
            try PlaybackOffer(
                Fixture.removing({ $0 == .direction(.recvonly) }, from: Fixture.description("chromium-recvonly.sdp"))
                    .withDirection(.sendonly))
        }
        #expect(throws: NegotiationError.missingBundle) {
            try PlaybackOffer(
                Fixture.removing(
                    { if case .group = $0 { true } else { false } }, from: Fixture.description("chromium-recvonly.sdp")))
        }
    }
}

extension SessionDescription {
    fileprivate func withDirection(_ d: Direction) -> SessionDescription {
        var copy = self
        for i in copy.media.indices { copy.media[i].attributes.append(.direction(d)) }
        return copy
    }
}
