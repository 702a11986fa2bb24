import Codecs
import RTP
import SDP
import Wire

/// A publisher's offer (the client offers, the SFU answers), analysed
/// m-section by m-section: what we accept, with which codecs, layers and
/// header extensions, and what we reject and why.
package struct PublishOffer: Equatable, Sendable {
    /// Why an m-section is answered with port 0 (RFC 8829 section 5.3.1).
    package enum RejectionReason: Equatable, Sendable {
        /// Not audio or video over RTP: data channels (`m=application`)
        /// and anything else.
        case unsupportedMedia
        /// Audio without Opus/48000/2, or video without VP8 or H.264
        /// packetization mode 1.
        case noAcceptableCodec
        /// Not in the BUNDLE group: we run exactly one transport.
        case notBundled
        /// The client already rejected it (port 0, a stopped transceiver).
        case rejectedByOfferer
    }

    package struct RejectedSection: Equatable, Sendable {
        package var mid: MID
        package var media: String
        package var proto: String
        package var formats: [String]
        package var reason: RejectionReason
    }

    package enum Section: Equatable, Sendable {
        case accepted(PublishedTrackDescription)
        case rejected(RejectedSection)
        /// Data channels, accepted only where the caller allows them.
        case dataChannel(DataChannelSection)

        package var mid: MID {
            switch self {
            case .accepted(let t): t.mid
            case .rejected(let r): r.mid
            case .dataChannel(let d): d.mid
            }
        }
    }

    package let description: SessionDescription
    package let transport: RemoteTransportParameters
    /// One entry per m-section, in the offer's order.
    package let sections: [Section]

    /// The accepted m-sections in which the client sends media.
    package var tracks: [PublishedTrackDescription] {
        sections.compactMap { if case .accepted(let t) = $0, t.isSending { t } else { nil } }
    }

    /// The accepted data channel section, if any (at most one: a second is
    /// rejected, RFC 8841 section 4.1 allows one SCTP association per
    /// transport).
    package var dataChannel: DataChannelSection? {
        sections.lazy.compactMap { if case .dataChannel(let d) = $0 { d } else { nil } }.first
    }

    /// Analyses `offer`. `acceptsDataChannels`: a room participant's
    /// publisher transport takes an `m=application` data channel section;
    /// WHIP sessions do not (answered with port 0, RFC 8829 section
    /// 5.3.1). Throws when the transport is unusable (see
    /// `RemoteTransportParameters`) or when no m-section sends anything we
    /// accept (`nothingToPublish`: a recvonly-only offer belongs on the
    /// subscriber transport).
    package init(_ offer: SessionDescription, acceptsDataChannels: Bool = false) throws(NegotiationError) {
        transport = try RemoteTransportParameters(from: offer, as: .offer)
        description = offer
        let bundle = transport.bundle
        var dataChannelTaken = !acceptsDataChannels
        let sections = try OfferedSections.map(offer) { m, mid -> Section in
            if !dataChannelTaken, let data = DataChannelSection(m, mid: mid, bundle: bundle) {
                dataChannelTaken = true
                return .dataChannel(data)
            }
            return Self.analyse(m, mid: mid, bundle: bundle)
        }
        self.sections = sections
        if tracks.isEmpty { throw .nothingToPublish }
    }

    static func analyse(_ m: MediaDescription, mid: MID, bundle: [MID]) -> Section {
        let kind: MediaKind
        switch OfferedSections.screen(m, mid: mid, bundle: bundle) {
        case .rejected(let r): return .rejected(r)
        case .rtp(let k): kind = k
        }
        let codecs = acceptedCodecs(m, kind: kind)
        guard !codecs.isEmpty else { return .rejected(OfferedSections.rejection(m, mid: mid, .noAcceptableCodec)) }
        let extensionMaps = ExtensionMap.firstOfEach(
            m.extensionMaps.filter { HeaderExtensionIDs.accepts($0.uri, for: kind) })
        return .accepted(
            PublishedTrackDescription(
                mid: mid, kind: kind, direction: m.direction, msid: m.msid, codecs: codecs,
                simulcast: simulcastLayers(m, accepted: codecs.map(\.payloadType)),
                sources: signalledSources(m), headerExtensions: HeaderExtensionIDs(maps: extensionMaps),
                extensionMaps: extensionMaps, reducedSizeRTCP: m.has(.rtcpReducedSize)))
    }

    /// Opus/48000/2 for audio; for video whichever of VP8/90000 and one
    /// H264/90000 with packetization-mode=1 comes first on the m= line
    /// (the offerer's preference, RFC 3264 section 6.1), with its RTX
    /// payload type.
    static func acceptedCodecs(_ m: MediaDescription, kind: MediaKind) -> [CodecDescription] {
        let order = m.formats
        let maps = m.rtpMaps
        let fmtp = m.formatParameters
        func parameters(_ pt: PayloadType) -> FormatParameters? { fmtp.first { $0.payloadType == pt } }
        func position(_ pt: PayloadType) -> Int { order.firstIndex(of: String(pt.rawValue)) ?? Int.max }

        var chosen: [(RTPMap, MediaCodec)] = []
        switch kind {
        case .audio:
            if let opus = maps.first(where: {
                $0.encodingName.lowercased() == "opus" && $0.clockRate == 48000 && $0.channels == 2
            }) {
                chosen.append((opus, .opus))
            }
        case .video:
            if let vp8 = maps.first(where: { $0.encodingName.uppercased() == "VP8" && $0.clockRate == 90000 }) {
                chosen.append((vp8, .video(.vp8)))
            }
            let h264 = maps.filter {
                $0.encodingName.uppercased() == "H264" && $0.clockRate == 90000
                    && parameters($0.payloadType)?["packetization-mode"] == "1"
            }
            // Constrained Baseline decodes everywhere (every browser and
            // aiortc offer it to receive; Main and High decoders take it
            // too, H.264 Annex A): 42e01f, else another Constrained
            // Baseline entry (RFC 6184 Table 5), else the offerer's first
            // mode-1 entry, forwarded only to receivers of its profile.
            func profile(_ map: RTPMap) -> H264ProfileLevelID.Profile? {
                guard let text = parameters(map.payloadType)?["profile-level-id"] else {
                    return H264ProfileLevelID.default.profile
                }
                return H264ProfileLevelID(Substring(text))?.profile
            }
            let preferred =
                h264.first { parameters($0.payloadType)?["profile-level-id"]?.lowercased() == "42e01f" }
                ?? h264.first { profile($0) == .constrainedBaseline }
                ?? h264.first
            if let preferred { chosen.append((preferred, .video(.h264))) }
        }
        chosen = chosen.filter { position($0.0.payloadType) != Int.max }
        chosen.sort { position($0.0.payloadType) < position($1.0.payloadType) }
        // One video codec per section, the offerer's first: every
        // subscriber is offered that codec under its payload type, so the
        // publisher must not switch to another mid-stream (libwebrtc falls
        // back to the next negotiated codec when an encoder fails). An
        // answer may list a subset of the offer (RFC 3264 section 6.1).
        if kind == .video { chosen = Array(chosen.prefix(1)) }

        return chosen.map { map, codec in describe(map, as: codec, in: m, kind: kind) }
    }

    /// The codec of `map` as the client wrote it in `m`: its payload type,
    /// format parameters, the supported RTCP feedback for it and (video) its
    /// RTX payload type (`apt=`, RFC 4588 section 8.6).
    static func describe(_ map: RTPMap, as codec: MediaCodec, in m: MediaDescription, kind: MediaKind) -> CodecDescription {
        let fmtp = m.formatParameters
        func parameters(_ pt: PayloadType) -> FormatParameters? { fmtp.first { $0.payloadType == pt } }
        let pt = map.payloadType
        let rtx = m.rtpMaps.first { r in
            r.encodingName.lowercased() == "rtx" && r.clockRate == map.clockRate
                && parameters(r.payloadType)?["apt"] == String(pt.rawValue)
        }
        var feedback: [CodecDescription.Feedback] = []
        for fb in m.rtcpFeedback where fb.payloadType == nil || fb.payloadType == pt {
            let f = CodecDescription.Feedback(type: fb.type, parameter: fb.parameter)
            if CodecDescription.Feedback.supported.contains(f), !feedback.contains(f) { feedback.append(f) }
        }
        let raw = parameters(pt)?.raw
        return CodecDescription(
            codec: codec, payloadType: pt, clockRate: map.clockRate, channels: map.channels,
            formatParameters: raw?.isEmpty == false ? raw : nil,
            rtxPayloadType: kind == .video ? rtx?.payloadType : nil, feedback: feedback)
    }

    /// `a=simulcast:send` streams in order, first alternative of each, with
    /// the restrictions of its `a=rid ... send` line. A rid whose `pt=` list
    /// names none of the accepted payload types cannot be received and is
    /// left out (RFC 8851 section 5.2 lets the answerer remove it).
    static func simulcastLayers(_ m: MediaDescription, accepted: [PayloadType]) -> [SimulcastLayer] {
        guard let simulcast = m.simulcast else { return [] }
        var layers: [SimulcastLayer] = []
        for stream in simulcast.send {
            guard let first = stream.first, !layers.contains(where: { $0.rid == first.rid }),
                let rid = m.rids.first(where: { $0.id == first.rid && $0.direction == .send })
            else { continue }
            let pts = rid.payloadTypes.filter(accepted.contains)
            if !rid.payloadTypes.isEmpty, pts.isEmpty { continue }
            layers.append(
                SimulcastLayer(rid: first.rid, paused: first.paused, payloadTypes: pts, restrictions: rid.restrictions))
        }
        return layers
    }

    /// The SSRCs of `a=ssrc` lines, grouped by `a=ssrc-group:SIM` and `FID`.
    static func signalledSources(_ m: MediaDescription) -> SignalledSources? {
        let attributes = m.sourceAttributes
        let groups = m.sourceGroups
        guard !attributes.isEmpty || !groups.isEmpty else { return nil }
        var rtxOf: [SSRC: SSRC] = [:]
        for g in groups where g.semantics == SourceGroup.flowIdentification && g.ssrcs.count == 2 {
            rtxOf[g.ssrcs[0]] = g.ssrcs[1]
        }
        let repair = Set(rtxOf.values)
        let simulcast = groups.first { $0.semantics == SourceGroup.simulcast }
        var primaries: [SSRC] = []
        if let simulcast {
            primaries = simulcast.ssrcs
        } else {
            for s in attributes.map(\.ssrc) + groups.flatMap(\.ssrcs) where !repair.contains(s) && !primaries.contains(s) {
                primaries.append(s)
            }
        }
        let cname = attributes.first { $0.name == "cname" }?.value
        return SignalledSources(
            cname: cname, streams: primaries.map { SignalledSources.Stream(ssrc: $0, rtxSSRC: rtxOf[$0]) },
            isSimulcast: simulcast != nil)
    }
}
