import Codecs
import RTP
import SDP
import Wire

/// A playback client's offer (WHEP, draft-ietf-wish-whep: the client offers
/// `recvonly` sections, the SFU answers and sends), analysed m-section by
/// m-section: which sections can carry a track to the client and with which
/// of the client's payload types, and which we reject.
package struct PlaybackOffer: Equatable, Sendable {
    /// An audio or video m-section in which the client can receive at
    /// least one codec we forward.
    package struct PlayableSection: Equatable, Sendable {
        package var mid: MID
        package var kind: MediaKind
        /// The client's direction: we send only where it is `recvonly` or
        /// `sendrecv`; a `sendonly`/`inactive` section is answered inactive.
        package var direction: Direction
        /// Every offered codec we can forward, in the offer's order, with
        /// the client's payload types: Opus/48000/2; VP8/90000; each
        /// H264/90000 entry with `packetization-mode=1`.
        package var codecs: [CodecDescription]
        /// `a=rtcp-rsize` (RFC 5506) was offered, and is answered.
        package var reducedSizeRTCP: Bool
        /// The offered `a=extmap` lines of the extensions the worker writes
        /// on what it sends (`PlaybackOffer.egressURIs`), with the client's
        /// ids: only one-byte ids (RFC 8285 section 4.2; the worker writes
        /// that form) and only where the client may receive them.
        package var extensionMaps: [ExtensionMap] = []

        /// True when the client receives on this m-section.
        package var isReceiving: Bool { direction == .recvonly || direction == .sendrecv }

        /// The client's payload type for a stream in `codec` (the
        /// publisher's), or nil when it cannot decode it (see
        /// `CodecDescription.canBeDecoded(by:)`).
        /// An entry of the stream's own H.264 profile comes before one
        /// that only contains it (a Baseline entry for a Constrained
        /// Baseline stream).
        package func codec(matching codec: CodecDescription) -> CodecDescription? {
            if codec.codec == .video(.h264), let profile = codec.h264ProfileLevelID?.profile,
                let same = codecs.first(where: { codec.canBeDecoded(by: $0) && $0.h264ProfileLevelID?.profile == profile })
            {
                return same
            }
            return codecs.first { codec.canBeDecoded(by: $0) }
        }
    }

    package enum Section: Equatable, Sendable {
        case playable(PlayableSection)
        case rejected(PublishOffer.RejectedSection)

        package var mid: MID {
            switch self {
            case .playable(let p): p.mid
            case .rejected(let r): r.mid
            }
        }
    }

    package let description: SessionDescription
    package let transport: RemoteTransportParameters
    /// One entry per m-section, in the offer's order.
    package let sections: [Section]

    /// The playable sections in which the client receives.
    package var receivingSections: [PlayableSection] {
        sections.compactMap { if case .playable(let p) = $0, p.isReceiving { p } else { nil } }
    }

    /// Analyses `offer`. Throws when the transport is unusable (see
    /// `RemoteTransportParameters`) or when no m-section receives anything
    /// we forward (`nothingToPlay`: a send-only offer belongs to WHIP).
    package init(_ offer: SessionDescription) throws(NegotiationError) {
        transport = try RemoteTransportParameters(from: offer, as: .offer)
        description = offer
        let bundle = transport.bundle
        let sections = try OfferedSections.map(offer) { m, mid in Self.analyse(m, mid: mid, bundle: bundle) }
        self.sections = sections
        if receivingSections.isEmpty { throw .nothingToPlay }
    }

    static func analyse(_ m: MediaDescription, mid: MID, bundle: [MID]) -> Section {
        let kind: MediaKind
        switch OfferedSections.screen(m, mid: mid, bundle: bundle) {
        case .rejected(let r): return .rejected(r)
        case .rtp(let k): kind = k
        }
        let codecs = offeredCodecs(m, kind: kind)
        guard !codecs.isEmpty else { return .rejected(OfferedSections.rejection(m, mid: mid, .noAcceptableCodec)) }
        return .playable(
            PlayableSection(
                mid: mid, kind: kind, direction: m.direction, codecs: codecs, reducedSizeRTCP: m.has(.rtcpReducedSize),
                extensionMaps: m.extensionMaps.filter { map in
                    egressURIs.contains(map.uri) && map.fitsOneByteHeader
                        && (map.direction == nil || map.direction == .recvonly || map.direction == .sendrecv)
                }))
    }

    /// The header extensions the worker writes on every packet to a
    /// subscriber (`EgressHeaderExtensions`): the transport-wide sequence
    /// number its transport-cc feedback reports on
    /// (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 2),
    /// abs-send-time, and the publisher's abs-capture-time.
    package static let egressURIs: [String] = [
        HeaderExtensionURI.transportWideSequenceNumber, HeaderExtensionURI.absoluteSendTime,
        HeaderExtensionURI.absoluteCaptureTime,
    ]

    /// The codecs of `m` we forward, in the order of the m= line. Unlike a
    /// publish offer, every H.264 mode-1 entry is kept: the publisher's
    /// profile decides which one fits.
    static func offeredCodecs(_ m: MediaDescription, kind: MediaKind) -> [CodecDescription] {
        let maps = m.rtpMaps
        let fmtp = m.formatParameters
        var out: [CodecDescription] = []
        for format in m.formats {
            guard let value = UInt8(format), let pt = PayloadType(rawValue: value),
                let map = maps.first(where: { $0.payloadType == pt })
            else { continue }
            let name = map.encodingName.lowercased()
            let codec: MediaCodec
            switch (kind, name) {
            case (.audio, "opus") where map.clockRate == 48000 && map.channels == 2: codec = .opus
            case (.video, "vp8") where map.clockRate == 90000: codec = .video(.vp8)
            case (.video, "h264") where map.clockRate == 90000:
                guard fmtp.first(where: { $0.payloadType == pt })?["packetization-mode"] == "1" else { continue }
                codec = .video(.h264)
            default: continue
            }
            out.append(PublishOffer.describe(map, as: codec, in: m, kind: kind))
        }
        return out
    }
}

extension CodecDescription {
    /// Whether a receiver that offered `offered` can decode a stream sent
    /// in `self` (a publisher's codec) once the payload type is rewritten:
    /// same codec, clock rate and channels; for H.264 (RFC 6184 section
    /// 8.1) also packetization mode 1 on both sides and a profile the
    /// receiver's entry decodes (`H264ProfileLevelID.isDecodable(by:)`:
    /// the same profile as RFC 6184 Table 5 classifies them, or one that
    /// H.264 Annex A makes a subset of it). The level is not compared
    /// (SFUs cannot transcode; browsers decode any level). A missing
    /// profile-level-id means `42000a` (section 8.1).
    package func canBeDecoded(by offered: CodecDescription) -> Bool {
        guard codec == offered.codec, clockRate == offered.clockRate else { return false }
        if codec == .opus { return channels == offered.channels }
        guard codec == .video(.h264) else { return true }
        guard h264Parameter("packetization-mode") == "1", offered.h264Parameter("packetization-mode") == "1",
            let mine = h264ProfileLevelID, let theirs = offered.h264ProfileLevelID
        else { return false }
        return mine.isDecodable(by: theirs)
    }

    func h264Parameter(_ name: String) -> String? {
        formatParameters.flatMap { FormatParameters(payloadType: payloadType, raw: $0)[name] }
    }

    /// The entry's profile-level-id (RFC 6184 section 8.1: `42000a` when
    /// absent); nil when it is not six hex digits.
    package var h264ProfileLevelID: H264ProfileLevelID? {
        guard let text = h264Parameter("profile-level-id") else { return .default }
        return H264ProfileLevelID(Substring(text))
    }
}
