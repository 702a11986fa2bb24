import BotMedia
import Codecs
import Foundation
import Negotiation
import RTP
import SDP
import Wire

/// The clips every bot of this process shares, encoded once at start:
/// video from the cache directory when a clip with the same encode
/// parameters was stored there before (`VideoClip.serialized()`), else
/// encoded with libvpx and stored; audio is cheap and encoded each run.
struct ClipLibrary {
    var audio: AudioClip
    /// Lowest resolution first: three layers with simulcast, else one.
    var video: [VideoClip]
    var loadedFromCache = 0
    var encoded = 0

    /// Seconds per clip: two keyframe intervals, so a PLI has a keyframe
    /// within 2 s and a 720p encode stays around a few seconds.
    static let seconds = 4
    static let audioSeconds = 10
    static let format = 2

    static func presets(_ options: BotOptions) -> [VideoClipPreset] {
        if options.audioOnly { return [] }
        let presets = (options.simulcast ? VideoClipPreset.simulcast : [.medium]).map { paced($0, options) }
        return options.videoCodec == .h264 ? presets.map(\.forH264) : presets
    }

    /// `--video-kbps` and `--fps` (issue #14): the top layer (or the single
    /// stream) at K kbit/s, lower layers at the default ratios (1500 : 500
    /// : 150, so K/3 and K/10), every layer at F frames per second with a
    /// keyframe every 2 s (rounded up to whole temporal-layer cycles, as
    /// the encoder needs), and grain in the picture (`pacedGrain`).
    /// Noise that keeps libvpx's CBR at its target: without it the test
    /// pattern compresses to about half of 8 Mbit/s at 640x360.
    static let pacedGrain = 12

    static func paced(_ preset: VideoClipPreset, _ options: BotOptions) -> VideoClipPreset {
        guard options.videoKbps != nil || options.framesPerSecond != nil else { return preset }
        var p = preset
        p.grain = pacedGrain
        if let k = options.videoKbps {
            let share = !options.simulcast || preset == .high ? 1 : preset == .medium ? 3 : 10
            p.targetBitrate = .kbps(Int64(max(1, k / share)))
        }
        if let f = options.framesPerSecond {
            let cycle = TemporalLayerPattern(layerCount: p.temporalLayers)?.periodicity ?? 1
            p.framesPerSecond = f
            p.keyframeInterval = max(cycle, (2 * f + cycle - 1) / cycle * cycle)
        }
        return p
    }

    /// The file name encodes every parameter of the encode, so a change
    /// of preset never reads a stale clip.
    static func fileName(_ p: VideoClipPreset, codec: VideoCodec) -> String {
        "\(codec == .h264 ? "h264" : "vp8")-\(p.width)x\(p.height)-\(p.framesPerSecond)fps-\(p.targetBitrate.bitsPerSecond)bps"
            + "-tl\(p.temporalLayers)"
            + "-ki\(p.keyframeInterval)\(p.grain > 0 ? "-g\(p.grain)" : "")-\(seconds)s-f\(format).clip"
    }

    static func videoCodec(_ options: BotOptions) -> VideoCodec { options.videoCodec == .h264 ? .h264 : .vp8 }

    static func defaultCacheDirectory() -> String {
        let env = ProcessInfo.processInfo.environment
        if let xdg = env["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/swiftlet-roombot" }
        return (env["HOME"] ?? "/tmp") + "/.cache/swiftlet-roombot"
    }

    static func load(_ options: BotOptions, log: (String) -> Void) throws -> ClipLibrary {
        let audio = try AudioClipEncoder.encode(seconds: audioSeconds)
        var library = ClipLibrary(audio: audio, video: [])
        let directory = options.cacheDirectory ?? defaultCacheDirectory()
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for preset in presets(options) {
            let codec = videoCodec(options)
            let path = directory + "/" + fileName(preset, codec: codec)
            if let data = FileManager.default.contents(atPath: path) {
                let bytes = [UInt8](data)
                if let clip = try? VideoClip(deserializing: bytes.span.bytes), clip.codec == codec {
                    library.video.append(clip)
                    library.loadedFromCache += 1
                    continue
                }
            }
            let started = Date()
            let clip = try VideoClipEncoder.encode(preset, seconds: seconds, codec: codec)
            log(
                String(
                    format: "roombot: encoded %dx%d clip in %.1f s, cached at %@\n", preset.width, preset.height,
                    Date().timeIntervalSince(started), path))
            library.video.append(clip)
            library.encoded += 1
            // A temporary file renamed into place: concurrent roombots never
            // read a half-written clip.
            let temporary = path + ".\(getpid()).tmp"
            if FileManager.default.createFile(atPath: temporary, contents: Data(clip.serialized())) {
                _ = try? FileManager.default.replaceItemAt(
                    URL(fileURLWithPath: path), withItemAt: URL(fileURLWithPath: temporary))
                if FileManager.default.fileExists(atPath: temporary) {
                    try? FileManager.default.moveItem(atPath: temporary, toPath: path)
                }
            }
        }
        return library
    }
}

/// The abs-capture-time id a publisher offers (`ClientOfferBuilder`'s
/// extmap 7). Publishers write it under the answer's id when the server
/// accepted the extension, else under this one (a server that does not
/// negotiate it ignores it).
let offeredAbsCaptureTimeID = UInt8(7)

/// Per mid, the id a description maps to abs-capture-time
/// (http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time). The
/// server copies a publisher's abs-capture-time into forwarded packets
/// under the id of the subscriber offer, so a subscriber reads it there,
/// like the other ids; a section without the extmap gets none.
func absCaptureTimeIDs(in description: SessionDescription) -> [MID: UInt8] {
    var ids: [MID: UInt8] = [:]
    for m in description.media {
        if let mid = m.mid, let id = m.extensionID(for: ClientOfferBuilder.absoluteCaptureTimeURI) { ids[mid] = id }
    }
    return ids
}

/// The same from SDP text; nil when it does not parse.
func absCaptureTimeIDs(sdp: String) -> [MID: UInt8]? {
    (try? SessionDescription.parse(sdp)).map { absCaptureTimeIDs(in: $0) }
}

/// BotMedia behind the seam: publishers loop the shared clips, subscribers
/// check what arrives.
struct ClipMedia: BotMediaFactory {
    let library: ClipLibrary
    let clock: NTPClock

    func makeSource(for plan: BotMediaPlan, seed: UInt64, now: Instant) -> BotMediaSource? {
        // What the packetizers write: rid only on video, audio level only
        // on audio; the repaired rid goes to RTX on its own
        // (`repairedRIDExtensionID`) and video orientation is not sent.
        func ids(_ n: HeaderExtensionIDs?, audio: Bool) -> HeaderExtensionIDs {
            HeaderExtensionIDs(
                mid: n?.mid, rtpStreamID: audio ? nil : n?.rtpStreamID, absoluteSendTime: n?.absoluteSendTime,
                transportWideSequenceNumber: n?.transportWideSequenceNumber, audioLevel: audio ? n?.audioLevel : nil,
                absoluteCaptureTime: n?.absoluteCaptureTime ?? offeredAbsCaptureTimeID)
        }
        let p = plan.publication
        // Only the rids the server took; a single-stream publication has no rid.
        let layers = p.videoLayers.filter { $0.rid == nil || plan.videoRIDs.contains($0.rid!) }
        let configuration = PublisherMediaConfiguration(
            audioSSRC: plan.audioMID == nil ? nil : p.audioSSRC, audioMID: plan.audioMID,
            audioPayloadType: plan.audioPayloadType, audioExtensions: ids(plan.audioExtensions, audio: true),
            videoLayers: plan.videoMID == nil
                ? [] : layers.map { .init(rid: $0.rid, ssrc: $0.ssrc, rtxSSRC: $0.rtxSSRC) },
            videoMID: plan.videoMID, videoPayloadType: plan.videoPayloadType,
            videoRTXPayloadType: plan.videoRTXPayloadType, videoExtensions: ids(plan.videoExtensions, audio: false),
            repairedRIDExtensionID: plan.videoExtensions?.repairedRTPStreamID)
        let clips = layers.compactMap { layer -> VideoClip? in
            guard let i = p.videoLayers.firstIndex(where: { $0.ssrc == layer.ssrc }), i < library.video.count else {
                return library.video.first
            }
            return library.video[i]
        }
        return try? MediaPublisher(
            configuration: configuration, audioClip: library.audio, videoClips: clips, clock: clock, start: now,
            seed: seed)
    }

    func makeSink(for track: AnnouncedTrack, absCaptureTimeID: UInt8?) -> BotMediaSink? {
        switch track.kind {
        case .audio: (try? AudioTrackReceiver(absCaptureTimeID: absCaptureTimeID, clock: clock)).map(AudioSink.init)
        case .video:
            if track.codec.codec == .video(.h264) {
                (try? H264TrackReceiver(absCaptureTimeID: absCaptureTimeID, clock: clock)).map(H264VideoSink.init)
            } else {
                VideoSink(VideoTrackReceiver(absCaptureTimeID: absCaptureTimeID, clock: clock))
            }
        }
    }
}

extension MediaPublisher: BotMediaSource {}

final class AudioSink: BotMediaSink {
    let receiver: AudioTrackReceiver
    init(_ receiver: AudioTrackReceiver) { self.receiver = receiver }

    func received(_ packet: UnsafeRawBufferPointer, header: RTPHeader, track: AnnouncedTrack, now: Instant) -> SinkFeedback {
        receiver.handle(header, packet: RawSpan(_unsafeBytes: packet), arrival: now)
        return .none
    }

    var figures: SinkFigures {
        let s = receiver.checker.statistics
        return SinkFigures(
            kind: "audio", firstFrameAt: receiver.firstPacketAt, delay: receiver.delay, decodeErrors: s.decodeErrors,
            frames: s.packetsDecoded)
    }
}

final class VideoSink: BotMediaSink {
    var receiver: VideoTrackReceiver
    init(_ receiver: VideoTrackReceiver) { self.receiver = receiver }

    func received(_ packet: UnsafeRawBufferPointer, header: RTPHeader, track: AnnouncedTrack, now: Instant) -> SinkFeedback {
        let before = receiver.undecodableFrames
        receiver.handle(header, packet: RawSpan(_unsafeBytes: packet), arrival: now)
        return receiver.undecodableFrames > before ? .keyframeNeeded : .none
    }

    func switchRequested(height: UInt16, at now: Instant) { receiver.switchRequested(height: height, at: now) }
    func senderReport(ntp: UInt64, rtpTimestamp: UInt32) { receiver.senderReport(ntp: ntp, rtpTimestamp: rtpTimestamp) }
    var freezes: FreezeDetector? { receiver.freezes }

    var figures: SinkFigures {
        let s = receiver.assembler.statistics
        var f = SinkFigures(
            kind: "video", firstFrameAt: receiver.firstFrameAt, delay: receiver.delay, decodeErrors: 0,
            frames: s.framesComplete)
        f.keyframes = s.keyframes
        f.framesIncomplete = s.framesIncomplete
        f.framesUndecodable = s.framesUndecodable
        f.switches = s.switches
        f.switchesNotOnKeyframe = s.switchesNotOnKeyframe
        f.resolutionChanges = receiver.resolutionChanges
        f.freezeCount = receiver.freezes.freezeCount
        f.freezeDuration = receiver.freezes.totalFreezeDuration
        f.switchTimes = receiver.switchTimes
        f.switchesUnfinished = receiver.switchesUnfinished
        f.height = receiver.assembler.resolution.map { Int($0.height) }
        return f
    }
}

/// An H.264 track: frames rebuilt and decoded (`H264TrackReceiver`); the
/// same figures as `VideoSink`, the height from the decoded picture;
/// decoder errors count as undecodable frames (`decodeErrors` is audio's
/// column in the report).
final class H264VideoSink: BotMediaSink {
    let receiver: H264TrackReceiver
    init(_ receiver: H264TrackReceiver) { self.receiver = receiver }

    func received(_ packet: UnsafeRawBufferPointer, header: RTPHeader, track: AnnouncedTrack, now: Instant) -> SinkFeedback {
        let before = receiver.undecodableFrames
        receiver.handle(header, packet: RawSpan(_unsafeBytes: packet), arrival: now)
        return receiver.undecodableFrames > before ? .keyframeNeeded : .none
    }

    func switchRequested(height: UInt16, at now: Instant) { receiver.switchRequested(height: height, at: now) }
    func senderReport(ntp: UInt64, rtpTimestamp: UInt32) { receiver.senderReport(ntp: ntp, rtpTimestamp: rtpTimestamp) }
    var freezes: FreezeDetector? { receiver.timeline.freezes }

    var figures: SinkFigures {
        let s = receiver.assembler.statistics
        let t = receiver.timeline
        var f = SinkFigures(
            kind: "video", firstFrameAt: t.firstFrameAt, delay: t.delay, decodeErrors: 0, frames: s.framesComplete)
        f.keyframes = s.keyframes
        f.framesIncomplete = s.framesIncomplete
        f.framesUndecodable = s.framesUndecodable + receiver.decodeErrors
        f.switches = s.switches
        f.switchesNotOnKeyframe = s.switchesNotOnKeyframe
        f.resolutionChanges = t.resolutionChanges
        f.freezeCount = t.freezes.freezeCount
        f.freezeDuration = t.freezes.totalFreezeDuration
        f.switchTimes = t.switchTimes
        f.switchesUnfinished = t.switchesUnfinished
        f.height = receiver.resolution.map(\.height)
        return f
    }
}
