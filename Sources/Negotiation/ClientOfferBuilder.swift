import RTP
import SDP
import Wire

/// What a publishing client sends: audio, video as one stream or as rid
/// simulcast layers, with the SSRCs it will use.
package struct ClientPublication: Equatable, Sendable {
    package struct VideoLayer: Equatable, Sendable {
        /// nil for a single (non-simulcast) stream.
        package var rid: RID?
        package var ssrc: SSRC
        package var rtxSSRC: SSRC
        package init(rid: RID?, ssrc: SSRC, rtxSSRC: SSRC) {
            self.rid = rid
            self.ssrc = ssrc
            self.rtxSSRC = rtxSSRC
        }
    }

    package var audioSSRC: SSRC?
    /// Empty: no video. One layer without rid: a single stream. Several
    /// with rids, lowest first (`q`, `h`, `f`): rid simulcast.
    package var videoLayers: [VideoLayer]
    /// `a=msid` stream id and the track ids of the two sections.
    package var streamID: String
    package var audioTrackID: String
    package var videoTrackID: String
    /// RTCP CNAME (RFC 3550 section 6.5.1).
    package var cname: String

    package init(
        audioSSRC: SSRC?, videoLayers: [VideoLayer], streamID: String, audioTrackID: String = "audio",
        videoTrackID: String = "video", cname: String
    ) {
        self.audioSSRC = audioSSRC
        self.videoLayers = videoLayers
        self.streamID = streamID
        self.audioTrackID = audioTrackID
        self.videoTrackID = videoTrackID
        self.cname = cname
    }

    package var isSimulcast: Bool { videoLayers.count > 1 }
}

/// The offers of a client (roombot) on its own transports, the mirror of
/// `PublishAnswerer`: a publishing offer (RFC 8829 section 5.2) with Opus
/// and VP8 (with RTX), rid simulcast (RFC 8853) or one stream, and a
/// receive-only offer for WHEP playback. We are a full ICE agent and offer
/// `a=setup:actpass` (RFC 8842 section 5.2); the server answers `passive`
/// and we become the DTLS client.
package struct ClientOfferBuilder: Sendable {
    package static let audioPayloadType = PayloadType(masking: 111)
    package static let videoPayloadType = PayloadType(masking: 96)
    package static let videoRTXPayloadType = PayloadType(masking: 97)
    /// Not in RTP's list because the SFU does not read it; browsers send it.
    package static let absoluteCaptureTimeURI = HeaderExtensionURI.absoluteCaptureTime

    /// The `a=extmap` ids we offer, one id per URI across the BUNDLE
    /// (RFC 8285 section 6), in the range of the one-byte form (1...14).
    package static let audioExtensions: [ExtensionMap] = [
        ExtensionMap(id: 1, uri: HeaderExtensionURI.mid),
        ExtensionMap(id: 4, uri: HeaderExtensionURI.absoluteSendTime),
        ExtensionMap(id: 5, uri: HeaderExtensionURI.transportWideSequenceNumber),
        ExtensionMap(id: 6, uri: HeaderExtensionURI.audioLevel),
        ExtensionMap(id: 7, uri: absoluteCaptureTimeURI),
    ]
    package static let videoExtensions: [ExtensionMap] = [
        ExtensionMap(id: 1, uri: HeaderExtensionURI.mid),
        ExtensionMap(id: 2, uri: HeaderExtensionURI.rtpStreamID),
        ExtensionMap(id: 3, uri: HeaderExtensionURI.repairedRTPStreamID),
        ExtensionMap(id: 4, uri: HeaderExtensionURI.absoluteSendTime),
        ExtensionMap(id: 5, uri: HeaderExtensionURI.transportWideSequenceNumber),
        ExtensionMap(id: 7, uri: absoluteCaptureTimeURI),
    ]

    package static var opus: CodecDescription { .opus(payloadType: audioPayloadType) }
    package static var vp8: CodecDescription { .vp8(payloadType: videoPayloadType, rtxPayloadType: videoRTXPayloadType) }

    /// The H.264 we offer instead of VP8 when asked (roombot
    /// `--video-codec h264`): constrained baseline 42e01f, packetization
    /// mode 1 (RFC 6184 section 8.1), under VP8's payload types, with RTX.
    package static var h264: CodecDescription {
        .h264(payloadType: videoPayloadType, rtxPayloadType: videoRTXPayloadType)
    }

    package let sessionID: UInt64
    package private(set) var sessionVersion: UInt64 = 0
    /// The video codec of both offers: `vp8` unless set.
    package var videoCodec: CodecDescription = Self.vp8
    /// Publish offers end with a data channel section (roombot
    /// `--data-rate`).
    package var offersDataChannel = false
    /// Our transport: full ICE (`isICELite` false), host candidates.
    package var local: LocalTransportParameters

    /// `sessionID` from the caller (random), cut to 63 bits (RFC 8829
    /// section 5.2.1).
    package init(sessionID: UInt64, local: LocalTransportParameters) {
        self.sessionID = sessionID & 0x7FFF_FFFF_FFFF_FFFF
        self.local = local
    }

    /// The publish offer: an audio section (mid 0) when there is an audio
    /// SSRC, then a video section (mid 1, or 0 without audio) when there
    /// are video layers, both `sendonly`, bundled.
    package mutating func publishOffer(_ p: ClientPublication) -> SessionDescription {
        sessionVersion &+= 1
        var media: [MediaDescription] = []
        if let ssrc = p.audioSSRC {
            var a = sectionHead(mid: media.count, extensions: Self.audioExtensions, direction: .sendonly)
            a.append(.msid(MediaStreamID(streamID: p.streamID, trackID: p.audioTrackID)))
            a += Self.opus.attributes
            a += sourceLines([ssrc], p)
            media.append(section(.audio, Self.opus, a))
        }
        if !p.videoLayers.isEmpty {
            var a = sectionHead(mid: media.count, extensions: Self.videoExtensions, direction: .sendonly)
            a.append(.msid(MediaStreamID(streamID: p.streamID, trackID: p.videoTrackID)))
            a += videoCodec.attributes
            if p.isSimulcast {
                // RFC 8853: the layers are told apart by rid; libwebrtc
                // sends no a=ssrc lines for rid simulcast.
                let rids = p.videoLayers.compactMap(\.rid)
                for rid in rids { a.append(.rid(RIDDescription(id: rid, direction: .send))) }
                a.append(.simulcast(Simulcast(send: rids.map { [Simulcast.Stream(rid: $0)] })))
            } else if let layer = p.videoLayers.first {
                a.append(
                    .ssrcGroup(SourceGroup(semantics: SourceGroup.flowIdentification, ssrcs: [layer.ssrc, layer.rtxSSRC])))
                a += sourceLines([layer.ssrc, layer.rtxSSRC], p)
            }
            media.append(section(.video, videoCodec, a))
        }
        if offersDataChannel {
            // RFC 8841 section 4.1: one SCTP association, bundled.
            var a = local.attributes(setup: .actpass, withCandidates: media.isEmpty)
            a.append(.mid(MID(String(media.count)) ?? MID("0")))
            a.append(.sctpPort(DataChannelSection.localPort))
            a.append(.maxMessageSize(DataChannelSection.localMaximumMessageSize))
            media.append(
                MediaDescription(
                    media: "application", port: local.defaultPort, proto: DataChannelSection.proto,
                    formats: [DataChannelSection.format], connection: local.connection, attributes: a))
        }
        return session(media)
    }

    /// A receive-only offer (WHEP playback): `audio` and `video` sections
    /// `recvonly`, Opus and `videoCodec` (with RTX), the same extensions.
    package mutating func playbackOffer(audio: Bool = true, video: Bool = true) -> SessionDescription {
        sessionVersion &+= 1
        var media: [MediaDescription] = []
        if audio {
            var a = sectionHead(mid: media.count, extensions: Self.audioExtensions, direction: .recvonly)
            a += Self.opus.attributes
            media.append(section(.audio, Self.opus, a))
        }
        if video {
            var a = sectionHead(mid: media.count, extensions: Self.videoExtensions, direction: .recvonly)
            a += videoCodec.attributes
            media.append(section(.video, videoCodec, a))
        }
        return session(media)
    }

    /// Checks the server's answer to `offer` and returns its transport:
    /// same m-sections and mids, `a=setup:passive`, and the rids it
    /// accepted per section (`a=rid ... recv`). A rejected section is
    /// reported, not thrown: the server may refuse a kind it does not take.
    package func applyAnswer(
        _ answer: SessionDescription, to offer: SessionDescription
    ) throws(NegotiationError) -> ServerAnswer {
        guard answer.media.count == offer.media.count else {
            throw .answerMediaCount(expected: offer.media.count, got: answer.media.count)
        }
        var sections: [ServerAnswer.Section] = []
        for (index, (o, m)) in zip(offer.media, answer.media).enumerated() {
            guard let mid = o.mid, m.mid == mid else {
                throw .answerMIDMismatch(index: index, expected: o.mid ?? MID("0"), got: m.mid)
            }
            guard m.media == o.media else { throw .answerMediaKindMismatch(mid: mid) }
            for f in m.formats where !o.formats.contains(f) { throw .answerFormatNotOffered(mid: mid, format: f) }
            let accepted = !m.isRejected  // port 0 + a=bundle-only is bundled (RFC 8843 section 7.3)
            sections.append(
                ServerAnswer.Section(
                    mid: mid, kind: MediaKind(rawValue: m.media), accepted: accepted, direction: m.direction,
                    receivedRIDs: m.rids.filter { $0.direction == .recv }.map(\.id),
                    extensions: HeaderExtensionIDs(maps: m.extensionMaps)))
        }
        let transport = try RemoteTransportParameters(fromServer: answer, as: .answer)
        return ServerAnswer(transport: transport, sections: sections)
    }

    // MARK: - Pieces

    func sectionHead(mid: Int, extensions: [ExtensionMap], direction: Direction) -> [Attribute] {
        var a = local.attributes(setup: .actpass, withCandidates: mid == 0)
        a.append(.mid(MID(String(mid)) ?? MID("0")))
        a += extensions.map { .extmap($0) }
        a.append(.direction(direction))
        a.append(.rtcpMux)
        a.append(.rtcpReducedSize)
        return a
    }

    func sourceLines(_ ssrcs: [SSRC], _ p: ClientPublication) -> [Attribute] {
        ssrcs.map { .ssrc(SourceAttribute(ssrc: $0, name: "cname", value: p.cname)) }
    }

    func section(_ kind: MediaKind, _ codec: CodecDescription, _ a: [Attribute]) -> MediaDescription {
        MediaDescription(
            media: kind.rawValue, port: local.defaultPort, formats: codec.payloadTypes.map { String($0.rawValue) },
            connection: local.connection, attributes: a)
    }

    func session(_ media: [MediaDescription]) -> SessionDescription {
        let mids = media.compactMap(\.mid)
        return SessionDescription(
            origin: Origin(sessionID: sessionID, sessionVersion: sessionVersion),
            attributes: [
                .group(Group(semantics: Group.bundle, mids: mids)), .extmapAllowMixed,
                .msidSemantic(MSIDSemantic(streamIDs: ["*"])),
            ], media: media)
    }
}

/// What the server's answer to one of our offers agreed.
package struct ServerAnswer: Equatable, Sendable {
    package struct Section: Equatable, Sendable {
        package var mid: MID
        package var kind: MediaKind?
        /// False when the server answered port 0.
        package var accepted: Bool
        package var direction: Direction
        /// `a=rid:<id> recv` lines: the simulcast layers it takes.
        package var receivedRIDs: [RID]
        /// The extensions the server kept, with our ids.
        package var extensions: HeaderExtensionIDs
    }

    package var transport: RemoteTransportParameters
    package var sections: [Section]
}
