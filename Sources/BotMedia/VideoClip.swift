import Codecs
import Wire

/// A short VP8 or H.264 clip encoded once and looped by every bot that
/// sends video: frame 0 is a keyframe (an IDR with its SPS and PPS for
/// H.264), so jumping from the last frame back to the first never breaks
/// decoding.
package struct VideoClip: Equatable, Sendable {
    /// `.vp8` (frames are RFC 6386 frames) or `.h264` (frames are access
    /// units in the Annex B byte stream format, H.264 Annex B).
    package var codec: VideoCodec
    package var width: Int
    package var height: Int
    package var framesPerSecond: Int
    /// 1, 2 or 3; the frames follow `TemporalLayerPattern(layerCount:)`.
    package var temporalLayers: UInt8
    /// Frames from one keyframe to the next (a multiple of the temporal
    /// pattern's period).
    package var keyframeInterval: Int
    /// The encoder's target for all layers together.
    package var targetBitrate: Bitrate
    package var frames: [EncodedFrame]

    package init(
        width: Int, height: Int, framesPerSecond: Int, temporalLayers: UInt8, keyframeInterval: Int,
        targetBitrate: Bitrate, frames: [EncodedFrame], codec: VideoCodec = .vp8
    ) {
        self.codec = codec
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.temporalLayers = temporalLayers
        self.keyframeInterval = keyframeInterval
        self.targetBitrate = targetBitrate
        self.frames = frames
    }

    /// RTP timestamp step per frame on the 90 kHz video clock (RFC 7741
    /// section 4.1).
    package var rtpTimestampStep: UInt32 { UInt32(90_000 / max(1, framesPerSecond)) }
}

/// The encode parameters of one simulcast layer.
package struct VideoClipPreset: Equatable, Sendable {
    package var width: Int
    package var height: Int
    package var framesPerSecond: Int
    package var targetBitrate: Bitrate
    package var temporalLayers: UInt8
    package var keyframeInterval: Int
    /// Per-pixel noise in the picture (`TestPattern.grain`), 0 for none:
    /// a clip that must reach a high bitrate needs detail the encoder
    /// cannot predict away.
    package var grain: Int

    package init(
        width: Int, height: Int, framesPerSecond: Int, targetBitrate: Bitrate, temporalLayers: UInt8,
        keyframeInterval: Int, grain: Int = 0
    ) {
        self.grain = grain
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.targetBitrate = targetBitrate
        self.temporalLayers = temporalLayers
        self.keyframeInterval = keyframeInterval
    }

    /// The three simulcast layers of roombot (issue #6): 320x180, 640x360
    /// and 1280x720 at 30 fps, about 150, 500 and 1500 kbit/s, three
    /// temporal layers, a keyframe every 2 s.
    package static let low = VideoClipPreset(
        width: 320, height: 180, framesPerSecond: 30, targetBitrate: .kbps(150), temporalLayers: 3, keyframeInterval: 60)
    package static let medium = VideoClipPreset(
        width: 640, height: 360, framesPerSecond: 30, targetBitrate: .kbps(500), temporalLayers: 3, keyframeInterval: 60)
    package static let high = VideoClipPreset(
        width: 1280, height: 720, framesPerSecond: 30, targetBitrate: .kbps(1500), temporalLayers: 3,
        keyframeInterval: 60)
    /// Lowest resolution first, as simulcast layers are usually listed.
    package static let simulcast: [VideoClipPreset] = [.low, .medium, .high]
}
