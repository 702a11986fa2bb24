import Codecs
import SDP
import Testing
import Wire

@testable import Negotiation

@Suite struct PublishOfferTests {
    @Test func chromiumSimulcastOfferYieldsOpusAndThreeLayerVideo() throws {
        let offer = try PublishOffer(Fixture.description("chromium-publish-simulcast.sdp"))
        let tracks = offer.tracks
        try #require(tracks.count == 2)

        let audio = tracks[0]
        #expect(audio.mid == "0")
        #expect(audio.kind == .audio)
        #expect(audio.direction == .sendonly)
        #expect(
            audio.msid
                == MediaStreamID(
                    streamID: "a48b20fd-382b-44f9-bfb7-ba0e8db0421a", trackID: "f7b6f2fd-18a8-4d07-a154-dda8a1cb0ff0"))
        #expect(
            audio.codecs == [
                CodecDescription(
                    codec: .opus, payloadType: PayloadType(rawValue: 111)!, clockRate: 48000, channels: 2,
                    formatParameters: "minptime=10;useinbandfec=1", feedback: [.transportCC])
            ])
        #expect(audio.simulcast.isEmpty)
        #expect(
            audio.sources
                == SignalledSources(cname: "EwiBr5PhGFiU3taw", streams: [.init(ssrc: SSRC(796_401_161))], isSimulcast: false))
        #expect(audio.headerExtensions.audioLevel == 1)
        #expect(audio.headerExtensions.absoluteSendTime == 2)
        #expect(audio.headerExtensions.transportWideSequenceNumber == 3)
        #expect(audio.headerExtensions.mid == 4)
        #expect(audio.headerExtensions.rtpStreamID == nil)
        #expect(audio.reducedSizeRTCP)

        let video = tracks[1]
        #expect(video.mid == "1")
        #expect(video.kind == .video)
        // VP8 (96, RTX 97), Chromium's first video codec, alone: one video
        // codec per section (the H264 entries come later on the m= line).
        #expect(video.codecs.map(\.codec) == [.video(.vp8)])
        #expect(video.codecs.map(\.payloadType.rawValue) == [96])
        #expect(video.codecs.map { $0.rtxPayloadType?.rawValue } == [97])
        #expect(
            video.codecs[0].feedback == [
                .receiverEstimatedMaximumBitrate, .transportCC, .fullIntraRequest, .nack, .pictureLossIndication,
            ])
        #expect(video.simulcast == [SimulcastLayer(rid: "q"), SimulcastLayer(rid: "h"), SimulcastLayer(rid: "f")])
        #expect(video.sources == nil)
        let ext = video.headerExtensions
        #expect(ext.mid == 4)
        #expect(ext.rtpStreamID == 10)
        #expect(ext.repairedRTPStreamID == 11)
        #expect(ext.absoluteSendTime == 2)
        #expect(ext.transportWideSequenceNumber == 3)
        #expect(ext.videoOrientation == 13)
        #expect(ext.audioLevel == nil)
        // toffset, playout-delay, ... and the dependency descriptor are not accepted.
        #expect(video.extensionMaps.map(\.id) == [2, 13, 3, 4, 10, 11])
    }

    @Test func aiortcOfferYieldsOpusWithoutFmtpAndSSRCGroups() throws {
        let offer = try PublishOffer(Fixture.description("aiortc-offer.sdp"))
        #expect(offer.transport.fingerprints.count == 3)
        let tracks = offer.tracks
        try #require(tracks.count == 2)
        let audio = tracks[0]
        #expect(audio.direction == .sendrecv)
        #expect(
            audio.codecs == [
                CodecDescription(codec: .opus, payloadType: PayloadType(rawValue: 96)!, clockRate: 48000, channels: 2)
            ])
        #expect(audio.headerExtensions.mid == 1)
        #expect(audio.headerExtensions.audioLevel == 2)
        #expect(!audio.reducedSizeRTCP)
        #expect(audio.sources?.streams == [.init(ssrc: SSRC(193_762_160))])

        let video = tracks[1]
        #expect(video.codecs.map(\.payloadType.rawValue) == [97])
        #expect(video.codecs.map { $0.rtxPayloadType?.rawValue } == [98])
        #expect(video.codecs[0].feedback == [.nack, .pictureLossIndication, .receiverEstimatedMaximumBitrate])
        #expect(
            video.sources
                == SignalledSources(
                    cname: "63b8698c-fed7-4264-bf19-8b612ea18dc3",
                    streams: [.init(ssrc: SSRC(3_848_914_013), rtxSSRC: SSRC(2_449_167_433))], isSimulcast: false))
        #expect(video.headerExtensions.mid == 1)
        #expect(video.headerExtensions.absoluteSendTime == 3)
    }

    @Test func chromiumRecvonlyOfferHasNothingToPublish() throws {
        #expect(throws: NegotiationError.nothingToPublish) { try PublishOffer(Fixture.description("chromium-recvonly.sdp")) }
    }

    @Test func dataChannelSectionIsRejected() throws {
        let offer = try PublishOffer(Fixture.description("chromium-sendrecv.sdp"))
        #expect(offer.tracks.map(\.mid) == ["0", "1"])
        #expect(offer.sections.count == 3)
        #expect(
            offer.sections[2]
                == .rejected(
                    .init(
                        mid: "2", media: "application", proto: "UDP/DTLS/SCTP", formats: ["webrtc-datachannel"],
                        reason: .unsupportedMedia)))
        // SSRC-signalled video with RTX (FID) and no simulcast.
        #expect(offer.tracks[1].sources?.streams == [.init(ssrc: SSRC(125_217_908), rtxSSRC: SSRC(466_715_351))])
    }

    @Test func publishOfferRefusesClientPassiveSetup() throws {
        var d = try Fixture.description("chromium-publish-simulcast.sdp")
        for i in d.media.indices {
            d.media[i].attributes = d.media[i].attributes.map { $0 == .setup(.actpass) ? .setup(.passive) : $0 }
        }
        #expect(throws: NegotiationError.setupRoleConflict(mid: "0", .passive)) { try PublishOffer(d) }
    }

    @Test func sectionsWithoutAcceptableCodecOrBundleAreRejected() throws {
        var d = try Fixture.description("chromium-sendrecv.sdp")
        // Audio offers only PCMU; video drops out of the BUNDLE group.
        d.media[0].attributes.removeAll {
            if case .rtpmap(let r) = $0 { r.encodingName != "PCMU" } else { false }
        }
        d.attributes = d.attributes.map {
            $0 == .group(Group(semantics: "BUNDLE", mids: ["0", "1", "2"]))
                ? .group(Group(semantics: "BUNDLE", mids: ["0", "2"])) : $0
        }
        #expect(throws: NegotiationError.nothingToPublish) { try PublishOffer(d) }
        let sections = PublishOffer.analyse(d.media[0], mid: "0", bundle: ["0", "2"])
        guard case .rejected(let r) = sections else { Issue.record("accepted"); return }
        #expect(r.reason == .noAcceptableCodec)
        guard case .rejected(let v) = PublishOffer.analyse(d.media[1], mid: "1", bundle: ["0", "2"]) else {
            Issue.record("accepted"); return
        }
        #expect(v.reason == .notBundled)
    }

    @Test func ridLayersKeepPausedFlagsRestrictionsAndDropUnacceptablePayloadTypes() throws {
        var d = try Fixture.description("chromium-publish-simulcast.sdp")
        d.media[1].attributes.removeAll {
            switch $0 {
            case .rid, .simulcast: true
            default: false
            }
        }
        let pt = { (n: UInt8) in PayloadType(rawValue: n)! }
        d.media[1].attributes += [
            .rid(
                RIDDescription(
                    id: "lo", direction: .send, payloadTypes: [pt(96), pt(98)],
                    restrictions: [.init(name: "max-width", value: "320")])),
            .rid(RIDDescription(id: "vp9", direction: .send, payloadTypes: [pt(98)])),
            .rid(RIDDescription(id: "hi", direction: .send)),
            .simulcast(Simulcast(send: [[.init(rid: "lo")], [.init(rid: "vp9")], [.init(rid: "hi", paused: true)]])),
        ]
        let video = try PublishOffer(d).tracks[1]
        #expect(
            video.simulcast == [
                SimulcastLayer(rid: "lo", payloadTypes: [pt(96)], restrictions: [.init(name: "max-width", value: "320")]),
                SimulcastLayer(rid: "hi", paused: true),
            ])
    }

    @Test func ssrcGroupSimulcastListsLayersWithTheirRTX() throws {
        var d = try Fixture.description("chromium-sendrecv.sdp")
        d.media[1].attributes.removeAll {
            switch $0 {
            case .ssrc, .ssrcGroup: true
            default: false
            }
        }
        let s = { (n: UInt32) in SSRC(n) }
        d.media[1].attributes += [
            .ssrcGroup(SourceGroup(semantics: "SIM", ssrcs: [s(1), s(2), s(3)])),
            .ssrcGroup(SourceGroup(semantics: "FID", ssrcs: [s(1), s(11)])),
            .ssrcGroup(SourceGroup(semantics: "FID", ssrcs: [s(2), s(12)])),
            .ssrcGroup(SourceGroup(semantics: "FID", ssrcs: [s(3), s(13)])),
            .ssrc(SourceAttribute(ssrc: s(1), name: "cname", value: "c")),
        ]
        let video = try PublishOffer(d).tracks[1]
        #expect(
            video.sources
                == SignalledSources(
                    cname: "c",
                    streams: [
                        .init(ssrc: s(1), rtxSSRC: s(11)), .init(ssrc: s(2), rtxSSRC: s(12)), .init(ssrc: s(3), rtxSSRC: s(13)),
                    ],
                    isSimulcast: true))
    }

    @Test func h264WithoutPacketizationModeOneIsNotAccepted() throws {
        var d = try Fixture.description("chromium-publish-simulcast.sdp")
        // Keep only the mode-0 H264 entries (104, 114) and their RTX.
        let keep: Set<UInt8> = [104, 107, 114, 115]
        d.media[1].attributes.removeAll {
            switch $0 {
            case .rtpmap(let r): !keep.contains(r.payloadType.rawValue)
            case .fmtp(let f): !keep.contains(f.payloadType.rawValue)
            default: false
            }
        }
        #expect(PublishOffer.acceptedCodecs(d.media[1], kind: .video).isEmpty)
    }
}
