import Codecs
import Wire

extension VideoClipPreset {
    /// The preset for H.264: the same size, rate and keyframe interval,
    /// one temporal layer, and three quarters of the bitrate. libopenh264's
    /// rate control lands on its target (1,503 kbit/s for a 1,500 target
    /// at 720p) where libvpx's falls about a quarter short (1,097), so this
    /// puts both codecs' layers at about the same wire rate and the SFU's
    /// allocator picks the same layers for them.
    package var forH264: VideoClipPreset {
        VideoClipPreset(
            width: width, height: height, framesPerSecond: framesPerSecond,
            targetBitrate: Bitrate(bitsPerSecond: targetBitrate.bitsPerSecond * 3 / 4), temporalLayers: 1,
            keyframeInterval: keyframeInterval)
    }
}

extension VideoClipEncoder {
    /// The preset's clip in `codec`: VP8 as `encode(_:seconds:)`, H.264
    /// as `encodeH264` with the preset's size, rate, bitrate and keyframe
    /// interval (pass `preset.forH264` for a VP8-like wire rate), so a
    /// subscriber tells the simulcast layers apart by decoded size alike.
    package static func encode(
        _ preset: VideoClipPreset, seconds: Int, codec: VideoCodec
    ) throws(BotMediaError)
        -> VideoClip
    {
        switch codec {
        case .vp8: return try encode(preset, seconds: seconds)
        case .h264:
            return try encodeH264(
                width: preset.width, height: preset.height, framesPerSecond: preset.framesPerSecond,
                seconds: seconds, targetBitrate: preset.targetBitrate, keyframeInterval: preset.keyframeInterval)
        case .vp9, .av1: throw .invalidParameter
        }
    }

    /// Encodes the moving `TestPattern` with libopenh264 (`H264Encoder`:
    /// constrained baseline, SPS and PPS before every IDR) into an H.264
    /// clip of access units in Annex B form. One temporal layer: every
    /// frame is a P frame on the previous one, so a lost frame breaks the
    /// stream until the next IDR, which comes at frame 0 and every
    /// `keyframeInterval` frames.
    ///
    /// - Parameters: as `H264Encoder`; `seconds` 1...600; `keyframeInterval`
    ///   positive. Anything else is `.invalidParameter`.
    package static func encodeH264(
        width: Int, height: Int, framesPerSecond: Int, seconds: Int, targetBitrate: Bitrate, keyframeInterval: Int
    ) throws(BotMediaError) -> VideoClip {
        guard (1...600).contains(seconds), keyframeInterval > 0 else { throw .invalidParameter }
        var encoder = try H264Encoder(
            width: width, height: height, framesPerSecond: framesPerSecond, targetBitrate: targetBitrate)
        let picture = TestPattern(width: width, height: height)
        var pixels = [UInt8](repeating: 0, count: picture.byteCount)
        let frameCount = seconds * framesPerSecond
        let duration = Duration.seconds(1) / framesPerSecond
        var frames: [EncodedFrame] = []
        frames.reserveCapacity(frameCount)
        for index in 0..<frameCount {
            picture.render(index: index, into: &pixels)
            let wantIDR = index % keyframeInterval == 0
            let unit = try encoder.encode(
                i420: &pixels, timestampMilliseconds: Int64(index * 1000 / framesPerSecond), forceIDR: wantIDR)
            // The clip's keyframe positions are its contract (loop point,
            // PLI answers): an encoder that put an IDR elsewhere, or none
            // where forced, would break it.
            guard unit.isIDR == wantIDR else { throw .codec(-2) }
            frames.append(
                EncodedFrame(bytes: unit.bytes, isKeyframe: unit.isIDR, layerSync: unit.isIDR, duration: duration))
        }
        return VideoClip(
            width: width, height: height, framesPerSecond: framesPerSecond, temporalLayers: 1,
            keyframeInterval: keyframeInterval, targetBitrate: targetBitrate, frames: frames, codec: .h264)
    }
}
