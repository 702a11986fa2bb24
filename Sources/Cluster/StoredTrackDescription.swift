import Codecs
import Negotiation
import RTP
import SDP
import Wire

/// A `PublishedTrackDescription` as a shard record stores it (JSON): what a
/// far node needs to show the track to its subscribers and answer their
/// offers as the source node does (codecs with their payload types, layers,
/// SSRCs, header extensions).
///
/// A mirror with plain fields rather than `Codable` conformances on
/// Negotiation's, SDP's and Wire's types: those types are not this target's,
/// and their shapes (`ShortToken`, 7-bit `PayloadType`) are invariants the
/// mirror must check on the way back, not trust. The conversion is lossless
/// both ways: `StoredTrackDescription(d).description() == d` for every
/// description Negotiation can produce; a stored value that breaks a type's
/// invariant (a payload type over 127, a MID of 17 bytes, an unknown codec
/// or direction) converts to nil.
struct StoredTrackDescription: Codable, Equatable {
    var mid: String
    var kind: String
    var direction: String
    var msid: StoredStreamID?
    var codecs: [StoredCodec]
    /// Nil for none, as are the other lists that are mostly empty: a
    /// record carries every track of up to hundreds of participants, and
    /// `[]` written for each is a tenth of an audio track's bytes.
    var simulcast: [StoredLayer]?
    var sources: StoredSources?
    var headerExtensions: StoredHeaderExtensionIDs
    var extensionMaps: [StoredExtensionMap]
    var reducedSizeRTCP: Bool

    struct StoredStreamID: Codable, Equatable {
        var stream: String
        var track: String?
    }

    struct StoredCodec: Codable, Equatable {
        /// `opus`, `vp8`, `vp9`, `h264`, `av1`: our names, not the rtpmap's
        /// spelling, so a change of case in SDP never changes a record.
        var codec: String
        var payloadType: UInt8
        var clockRate: UInt32
        var channels: UInt16?
        var formatParameters: String?
        var rtxPayloadType: UInt8?
        var feedback: [StoredFeedback]
    }

    struct StoredFeedback: Codable, Equatable {
        var type: String
        var parameter: String?
    }

    struct StoredLayer: Codable, Equatable {
        var rid: String
        var paused: Bool
        var payloadTypes: [UInt8]?
        var restrictions: [StoredRestriction]?
    }

    struct StoredRestriction: Codable, Equatable {
        var name: String
        var value: String?
    }

    struct StoredSources: Codable, Equatable {
        var cname: String?
        var streams: [StoredStream]
        var isSimulcast: Bool
    }

    struct StoredStream: Codable, Equatable {
        var ssrc: UInt32
        var rtxSSRC: UInt32?
    }

    struct StoredHeaderExtensionIDs: Codable, Equatable {
        var mid: UInt8?
        var rtpStreamID: UInt8?
        var repairedRTPStreamID: UInt8?
        var absoluteSendTime: UInt8?
        var transportWideSequenceNumber: UInt8?
        var audioLevel: UInt8?
        var videoOrientation: UInt8?
        var absoluteCaptureTime: UInt8?
    }

    struct StoredExtensionMap: Codable, Equatable {
        var id: UInt8
        var direction: String?
        var uri: String
        var attributes: [String]?
    }
}

extension StoredTrackDescription {
    init(_ d: PublishedTrackDescription) {
        mid = d.mid.description
        kind = d.kind.rawValue
        direction = d.direction.rawValue
        msid = d.msid.map { StoredStreamID(stream: $0.streamID, track: $0.trackID) }
        codecs = d.codecs.map { c in
            StoredCodec(
                codec: Self.name(of: c.codec), payloadType: c.payloadType.rawValue, clockRate: c.clockRate,
                channels: c.channels, formatParameters: c.formatParameters, rtxPayloadType: c.rtxPayloadType?.rawValue,
                feedback: c.feedback.map { StoredFeedback(type: $0.type, parameter: $0.parameter) })
        }
        simulcast = Self.unlessEmpty(
            d.simulcast.map { l in
                StoredLayer(
                    rid: l.rid.description, paused: l.paused, payloadTypes: Self.unlessEmpty(l.payloadTypes.map(\.rawValue)),
                    restrictions: Self.unlessEmpty(l.restrictions.map { StoredRestriction(name: $0.name, value: $0.value) }))
            })
        sources = d.sources.map { s in
            StoredSources(
                cname: s.cname, streams: s.streams.map { StoredStream(ssrc: $0.ssrc.rawValue, rtxSSRC: $0.rtxSSRC?.rawValue) },
                isSimulcast: s.isSimulcast)
        }
        let h = d.headerExtensions
        headerExtensions = StoredHeaderExtensionIDs(
            mid: h.mid, rtpStreamID: h.rtpStreamID, repairedRTPStreamID: h.repairedRTPStreamID,
            absoluteSendTime: h.absoluteSendTime, transportWideSequenceNumber: h.transportWideSequenceNumber,
            audioLevel: h.audioLevel, videoOrientation: h.videoOrientation, absoluteCaptureTime: h.absoluteCaptureTime)
        extensionMaps = d.extensionMaps.map { e in
            StoredExtensionMap(id: e.id, direction: e.direction?.rawValue, uri: e.uri, attributes: Self.unlessEmpty(e.attributes))
        }
        reducedSizeRTCP = d.reducedSizeRTCP
    }

    /// The description this stores, or nil when a field breaks its type's
    /// invariant (the record holding it is then unreadable as a whole).
    func description() -> PublishedTrackDescription? {
        guard let mid = MID(mid), let kind = MediaKind(rawValue: kind), let direction = Direction(rawValue: direction)
        else { return nil }
        var codecs: [CodecDescription] = []
        for c in self.codecs {
            guard let codec = Self.codec(named: c.codec), let pt = PayloadType(rawValue: c.payloadType) else { return nil }
            var rtx: PayloadType?
            if let stored = c.rtxPayloadType {
                guard let p = PayloadType(rawValue: stored) else { return nil }
                rtx = p
            }
            codecs.append(
                CodecDescription(
                    codec: codec, payloadType: pt, clockRate: c.clockRate, channels: c.channels,
                    formatParameters: c.formatParameters, rtxPayloadType: rtx,
                    feedback: c.feedback.map { CodecDescription.Feedback(type: $0.type, parameter: $0.parameter) }))
        }
        var layers: [SimulcastLayer] = []
        for l in simulcast ?? [] {
            guard let rid = RID(l.rid) else { return nil }
            var pts: [PayloadType] = []
            for stored in l.payloadTypes ?? [] {
                guard let p = PayloadType(rawValue: stored) else { return nil }
                pts.append(p)
            }
            layers.append(
                SimulcastLayer(
                    rid: rid, paused: l.paused, payloadTypes: pts,
                    restrictions: (l.restrictions ?? []).map { RIDDescription.Restriction(name: $0.name, value: $0.value) }))
        }
        var maps: [ExtensionMap] = []
        for e in extensionMaps {
            var direction: Direction?
            if let stored = e.direction {
                guard let d = Direction(rawValue: stored) else { return nil }
                direction = d
            }
            maps.append(ExtensionMap(id: e.id, direction: direction, uri: e.uri, attributes: e.attributes ?? []))
        }
        let h = headerExtensions
        return PublishedTrackDescription(
            mid: mid, kind: kind, direction: direction,
            msid: msid.map { MediaStreamID(streamID: $0.stream, trackID: $0.track) }, codecs: codecs,
            simulcast: layers,
            sources: sources.map { s in
                SignalledSources(
                    cname: s.cname,
                    streams: s.streams.map {
                        SignalledSources.Stream(ssrc: SSRC($0.ssrc), rtxSSRC: $0.rtxSSRC.map { SSRC(rawValue: $0) })
                    },
                    isSimulcast: s.isSimulcast)
            },
            headerExtensions: HeaderExtensionIDs(
                mid: h.mid, rtpStreamID: h.rtpStreamID, repairedRTPStreamID: h.repairedRTPStreamID,
                absoluteSendTime: h.absoluteSendTime, transportWideSequenceNumber: h.transportWideSequenceNumber,
                audioLevel: h.audioLevel, videoOrientation: h.videoOrientation, absoluteCaptureTime: h.absoluteCaptureTime),
            extensionMaps: maps, reducedSizeRTCP: reducedSizeRTCP)
    }

    static func unlessEmpty<T>(_ list: [T]) -> [T]? { list.isEmpty ? nil : list }

    static func name(of codec: MediaCodec) -> String {
        switch codec {
        case .opus: "opus"
        case .video(.vp8): "vp8"
        case .video(.vp9): "vp9"
        case .video(.h264): "h264"
        case .video(.av1): "av1"
        }
    }

    static func codec(named name: String) -> MediaCodec? {
        switch name {
        case "opus": .opus
        case "vp8": .video(.vp8)
        case "vp9": .video(.vp9)
        case "h264": .video(.h264)
        case "av1": .video(.av1)
        default: nil
        }
    }
}

extension StoredTrackDescription {
    /// Every count and string within `RoomShardRecord.Bounds`: checked on
    /// both sides, so a writer never stores what readers would refuse.
    var isWithinBounds: Bool {
        typealias B = RoomShardRecord.Bounds
        func fits(_ s: String?) -> Bool { B.fits(s) }
        guard fits(mid), fits(kind), fits(direction), fits(msid?.stream), fits(msid?.track),
            codecs.count <= B.maxCodecsPerTrack, (simulcast?.count ?? 0) <= B.maxSimulcastLayers,
            extensionMaps.count <= B.maxExtensionMaps
        else { return false }
        for c in codecs {
            guard fits(c.codec), (c.formatParameters?.utf8.count ?? 0) <= B.maxFormatParametersBytes,
                c.feedback.count <= B.maxFeedbackPerCodec, c.feedback.allSatisfy({ fits($0.type) && fits($0.parameter) })
            else { return false }
        }
        for l in simulcast ?? [] {
            guard fits(l.rid), (l.payloadTypes?.count ?? 0) <= B.maxPayloadTypesPerLayer,
                (l.restrictions?.count ?? 0) <= B.maxRestrictionsPerLayer,
                (l.restrictions ?? []).allSatisfy({ fits($0.name) && fits($0.value) })
            else { return false }
        }
        if let sources {
            guard fits(sources.cname), sources.streams.count <= B.maxSourceStreams else { return false }
        }
        for e in extensionMaps {
            guard fits(e.direction), fits(e.uri), (e.attributes?.count ?? 0) <= B.maxExtensionAttributes,
                (e.attributes ?? []).allSatisfy(fits)
            else { return false }
        }
        return true
    }
}
