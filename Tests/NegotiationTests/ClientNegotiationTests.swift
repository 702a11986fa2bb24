import DTLS
import ICE
import RTP
import SDP
import Testing
import Wire

@testable import Negotiation

/// roombot's side of the transport: full ICE, its own host candidate.
private let botLocal = LocalTransportParameters(
    credentials: ICECredentials(ufrag: "BotU", password: "botpasswordbotpasswordbo"),
    fingerprint: CertificateFingerprint(algorithm: .sha256, digest: Array(repeating: 0xB0, count: 32))!,
    candidates: [ICECandidate.host(TransportAddress(ipv4: 127, 0, 0, 1, port: 50001))], isICELite: false)

private let simulcast = ClientPublication(
    audioSSRC: SSRC(1000),
    videoLayers: [
        .init(rid: "q", ssrc: SSRC(2000), rtxSSRC: SSRC(2001)), .init(rid: "h", ssrc: SSRC(2010), rtxSSRC: SSRC(2011)),
        .init(rid: "f", ssrc: SSRC(2020), rtxSSRC: SSRC(2021)),
    ], streamID: "bot-1", cname: "bot-1-cname")

/// Serialised and parsed again, as it travels in JSON.
private func wire(_ d: SessionDescription) throws -> SessionDescription {
    try SessionDescription.parse(d.text)
}

@Suite struct ClientOfferBuilderTests {
    @Test func serverAcceptsTheSimulcastOfferWithRidsAndExtensionIDs() throws {
        var builder = ClientOfferBuilder(sessionID: 42, local: botLocal)
        let offer = try wire(builder.publishOffer(simulcast))
        let analysed = try PublishOffer(offer)
        #expect(analysed.tracks.count == 2)
        let audio = try #require(analysed.tracks.first)
        #expect(audio.kind == .audio && audio.mid == "0")
        #expect(audio.codecs.map(\.payloadType) == [ClientOfferBuilder.audioPayloadType])
        #expect(audio.headerExtensions.mid == 1 && audio.headerExtensions.audioLevel == 6)
        #expect(audio.headerExtensions.absoluteSendTime == 4 && audio.headerExtensions.transportWideSequenceNumber == 5)
        #expect(audio.sources?.streams.map(\.ssrc) == [SSRC(1000)])
        let video = try #require(analysed.tracks.last)
        #expect(video.kind == .video && video.mid == "1")
        #expect(video.simulcast.map(\.rid) == ["q", "h", "f"])
        #expect(video.codecs.first?.rtxPayloadType == ClientOfferBuilder.videoRTXPayloadType)
        #expect(video.headerExtensions.rtpStreamID == 2 && video.headerExtensions.repairedRTPStreamID == 3)
        // abs-capture-time is accepted: the server passes it through.
        #expect(video.headerExtensions.absoluteCaptureTime == 7)
        #expect(analysed.transport.setup == .actpass)
        #expect(analysed.transport.credentials == botLocal.credentials)
        #expect(analysed.transport.candidates.map(\.address) == botLocal.candidates.map(\.address))
        #expect(!analysed.transport.isICELite)

        var answerer = PublishAnswerer(sessionID: 9)
        let answer = try wire(answerer.makeAnswer(to: analysed, local: Fixture.local))
        let agreed = try builder.applyAnswer(answer, to: offer)
        #expect(agreed.transport.setup == .passive)
        #expect(agreed.transport.isICELite)
        #expect(agreed.transport.candidates.map(\.address) == [Fixture.serverAddress])
        #expect(agreed.sections.map(\.accepted) == [true, true])
        #expect(agreed.sections.map(\.direction) == [.recvonly, .recvonly])
        #expect(agreed.sections[1].receivedRIDs == ["q", "h", "f"])
        #expect(agreed.sections[1].extensions.rtpStreamID == 2)
    }

    @Test func singleStreamOfferSignalsSSRCAndRTXGroup() throws {
        var builder = ClientOfferBuilder(sessionID: 42, local: botLocal)
        var p = simulcast
        p.videoLayers = [.init(rid: nil, ssrc: SSRC(3000), rtxSSRC: SSRC(3001))]
        let offer = try wire(builder.publishOffer(p))
        let video = try #require(try PublishOffer(offer).tracks.last)
        #expect(video.simulcast.isEmpty)
        #expect(video.sources?.streams == [SignalledSources.Stream(ssrc: SSRC(3000), rtxSSRC: SSRC(3001))])
        #expect(video.sources?.cname == "bot-1-cname")
        #expect(offer.text.contains("a=ssrc-group:FID 3000 3001\r\n"))
    }

    @Test func audioOnlyOfferHasOneSectionAndVersionsGrow() throws {
        var builder = ClientOfferBuilder(sessionID: 42, local: botLocal)
        var p = simulcast
        p.videoLayers = []
        let first = builder.publishOffer(p)
        let second = builder.publishOffer(p)
        #expect(first.media.map(\.media) == ["audio"])
        #expect(first.bundleMIDs == ["0"])
        #expect(first.origin.sessionVersion == 1 && second.origin.sessionVersion == 2)
    }

    @Test func answerWithWrongSetupOrShapeIsRefused() throws {
        var builder = ClientOfferBuilder(sessionID: 42, local: botLocal)
        let offer = builder.publishOffer(simulcast)
        var answerer = PublishAnswerer(sessionID: 9)
        let answer = answerer.makeAnswer(to: try PublishOffer(offer), local: Fixture.local)
        // A server that wants to be the DTLS client: we cannot be its server.
        var active = answer
        for i in active.media.indices {
            active.media[i].attributes = active.media[i].attributes.map { if case .setup = $0 { .setup(.active) } else { $0 } }
        }
        #expect(throws: NegotiationError.setupRoleConflict(mid: "0", .active)) { try builder.applyAnswer(active, to: offer) }
        var short = answer
        short.media.removeLast()
        #expect(throws: NegotiationError.answerMediaCount(expected: 2, got: 1)) { try builder.applyAnswer(short, to: offer) }
        var renamed = answer
        renamed.media[1].attributes = renamed.media[1].attributes.map { if case .mid = $0 { .mid("9") } else { $0 } }
        #expect(throws: NegotiationError.answerMIDMismatch(index: 1, expected: "1", got: "9")) {
            try builder.applyAnswer(renamed, to: offer)
        }
        var foreign = answer
        foreign.media[0].formats = ["0"]
        #expect(throws: NegotiationError.answerFormatNotOffered(mid: "0", format: "0")) {
            try builder.applyAnswer(foreign, to: offer)
        }
    }

    @Test func playbackOfferIsAnsweredByTheWHEPAnswerer() throws {
        var builder = ClientOfferBuilder(sessionID: 7, local: botLocal)
        let offer = try wire(builder.playbackOffer())
        let analysed = try PlaybackOffer(offer)
        #expect(analysed.receivingSections.map(\.kind) == [.audio, .video])
        let sources = [
            PlaybackSource(trackID: "TR_a", streamID: "PA_x", codec: ClientOfferBuilder.opus, ssrc: SSRC(5), cname: "x"),
            PlaybackSource(
                trackID: "TR_v", streamID: "PA_x", codec: ClientOfferBuilder.vp8, ssrc: SSRC(6), rtxSSRC: SSRC(7), cname: "x"),
        ]
        var answerer = PlaybackAnswerer(sessionID: 3)
        let answer = answerer.makeAnswer(to: analysed, sources: sources, local: Fixture.local)
        #expect(answer.assignments.map(\.track.trackID) == ["TR_a", "TR_v"])
        // The bot offers RTX for VP8 (roombot's WHEP viewer NACKs): answered
        // with the bot's RTX number and our RTX SSRC.
        #expect(answer.assignments[1].track.codec.rtxPayloadType == ClientOfferBuilder.videoRTXPayloadType)
        #expect(answer.assignments[1].track.rtxSSRC == SSRC(7))
        let agreed = try builder.applyAnswer(try wire(answer.description), to: offer)
        #expect(agreed.sections.map(\.direction) == [.sendonly, .sendonly])
        #expect(answer.description.media[1].sourceGroups.map(\.ssrcs) == [[SSRC(6), SSRC(7)]])
        // What roombot's WHEP mode expects from the answer: the RTX SSRC it
        // unwraps retransmissions from.
        let announced = AnnouncedTrack(
            mid: "1", kind: .video, codec: ClientOfferBuilder.vp8, sentIn: try wire(answer.description).media[1])
        #expect(announced.ssrc == SSRC(6) && announced.rtxSSRC == SSRC(7))
        #expect(announced.trackID == "TR_v" && announced.streamID == "PA_x")
    }
}

@Suite struct ClientAnswerBuilderTests {
    let vp8 = CodecDescription.vp8(payloadType: PayloadType(masking: 96), rtxPayloadType: PayloadType(masking: 97))
    let opus = CodecDescription.opus(payloadType: PayloadType(masking: 111))

    func server() throws -> SubscriberOfferBuilder {
        var b = SubscriberOfferBuilder(sessionID: 1, local: Fixture.local)
        try b.add(
            track: OutgoingTrack(
                kind: .audio, codec: opus, ssrc: SSRC(11), streamID: "PA_pub", trackID: "TR_audio", cname: "c"))
        try b.add(
            track: OutgoingTrack(
                kind: .video, codec: vp8, ssrc: SSRC(21), rtxSSRC: SSRC(22), streamID: "PA_pub", trackID: "TR_video",
                cname: "c"))
        return b
    }

    @Test func answerToTheSubscriberOfferIsAcceptedAndListsTracks() throws {
        var server = try server()
        let offer = try wire(server.createOffer())
        var client = ClientAnswerBuilder(sessionID: 5, local: botLocal)
        let answer = try client.makeAnswer(to: offer)
        #expect(answer.transport.isICELite)
        #expect(answer.transport.setup == .actpass)
        #expect(answer.tracks.map(\.trackID) == ["TR_audio", "TR_video"])
        #expect(answer.tracks.map(\.streamID) == ["PA_pub", "PA_pub"])
        #expect(answer.tracks.map(\.ssrc) == [SSRC(11), SSRC(21)])
        #expect(answer.tracks.map(\.rtxSSRC) == [nil, SSRC(22)])
        #expect(answer.tracks[1].codec.rtxPayloadType == PayloadType(masking: 97))
        let remote = try server.applyAnswer(try wire(answer.description))
        #expect(remote.setup == .active)
        #expect(remote.credentials == botLocal.credentials)
        #expect(remote.candidates.map(\.address) == botLocal.candidates.map(\.address))
        #expect(server.state == .stable)
    }

    @Test func removedTrackIsAnsweredInactiveAndNotListed() throws {
        var server = try server()
        var client = ClientAnswerBuilder(sessionID: 5, local: botLocal)
        _ = try server.applyAnswer(client.makeAnswer(to: server.createOffer()).description)
        try server.remove(trackID: "TR_audio")
        let answer = try client.makeAnswer(to: wire(server.createOffer()))
        #expect(answer.tracks.map(\.trackID) == ["TR_video"])
        #expect(answer.description.media.map(\.direction) == [.inactive, .recvonly])
        #expect(answer.description.origin.sessionVersion == 2)
        _ = try server.applyAnswer(answer.description)
    }

    @Test func offerWithoutBundleOrWithClientSetupIsRefused() throws {
        var server = try server()
        let offer = try server.createOffer()
        var client = ClientAnswerBuilder(sessionID: 5, local: botLocal)
        var noBundle = offer
        noBundle.attributes.removeAll { if case .group = $0 { true } else { false } }
        #expect(throws: NegotiationError.missingBundle) { try client.makeAnswer(to: noBundle) }
        let active = Fixture.removing({ if case .setup = $0 { true } else { false } }, from: offer)
        #expect(throws: NegotiationError.missingSetup(mid: "0")) { try client.makeAnswer(to: active) }
    }

    @Test func undecodableSectionIsRejectedWithPortZero() throws {
        var server = try server()
        var offer = try server.createOffer()
        // Rename the video codec to one we cannot decode.
        offer.media[1].attributes = offer.media[1].attributes.map {
            if case .rtpmap(var r) = $0, r.encodingName == "VP8" {
                r.encodingName = "AV1"
                return .rtpmap(r)
            }
            return $0
        }
        var client = ClientAnswerBuilder(sessionID: 5, local: botLocal)
        let answer = try client.makeAnswer(to: offer)
        #expect(answer.description.media.map(\.port) == [50001, 0])
        #expect(answer.description.bundleMIDs == ["0"])
        #expect(answer.tracks.map(\.trackID) == ["TR_audio"])
    }
}
