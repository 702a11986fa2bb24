import CVPX
import Wire

/// Encodes the moving `TestPattern` with libvpx's VP8 encoder into a
/// `VideoClip`. Runs once at start (it costs real CPU: about a second of
/// 720p per second of clip); bots then loop the clip.
///
/// Encoder settings follow what a WebRTC sender uses: realtime deadline,
/// CBR, no lag, error resilient (so a decoder can continue after a dropped
/// upper-layer frame), no automatic keyframes (they are forced at frame 0
/// and every `keyframeInterval` frames), libvpx temporal-layer rate control
/// (`ts_*`), and per-frame reference flags from `TemporalLayerPattern`
/// that make every upper-layer frame droppable.
package enum VideoClipEncoder {
    package static func encode(_ preset: VideoClipPreset, seconds: Int) throws(BotMediaError) -> VideoClip {
        try encode(
            width: preset.width, height: preset.height, framesPerSecond: preset.framesPerSecond, seconds: seconds,
            targetBitrate: preset.targetBitrate, temporalLayers: preset.temporalLayers,
            keyframeInterval: preset.keyframeInterval, grain: preset.grain)
    }

    /// - Parameters: `width` and `height` even, 16...4096; `framesPerSecond`
    ///   1...120; `seconds` 1...600; `temporalLayers` 1...3;
    ///   `keyframeInterval` a positive multiple of the temporal period (1,
    ///   2 or 4 frames); `grain` 0...64 (`TestPattern.grain`). Anything
    ///   else is `.invalidParameter`.
    package static func encode(
        width: Int, height: Int, framesPerSecond: Int, seconds: Int, targetBitrate: Bitrate, temporalLayers: UInt8,
        keyframeInterval: Int, grain: Int = 0
    ) throws(BotMediaError) -> VideoClip {
        guard (16...4096).contains(width), (16...4096).contains(height), width % 2 == 0, height % 2 == 0,
            (1...120).contains(framesPerSecond), (1...600).contains(seconds),
            targetBitrate.bitsPerSecond >= 1000, targetBitrate.bitsPerSecond <= 100_000_000,
            let pattern = TemporalLayerPattern(layerCount: temporalLayers),
            keyframeInterval > 0, keyframeInterval % pattern.periodicity == 0, (0...64).contains(grain)
        else { throw .invalidParameter }

        var cfg = vpx_codec_enc_cfg_t()
        let iface = vpx_codec_vp8_cx()
        var status = vpx_codec_enc_config_default(iface, &cfg, 0)
        guard status == VPX_CODEC_OK else { throw .codec(Int32(status.rawValue)) }
        let kbps = UInt32(targetBitrate.bitsPerSecond / 1000)
        cfg.g_w = UInt32(width)
        cfg.g_h = UInt32(height)
        cfg.g_timebase = vpx_rational(num: 1, den: Int32(framesPerSecond))
        cfg.g_threads = 1
        cfg.g_lag_in_frames = 0
        cfg.g_error_resilient = vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT)
        cfg.g_pass = VPX_RC_ONE_PASS
        cfg.rc_end_usage = VPX_CBR
        cfg.rc_target_bitrate = kbps
        cfg.rc_dropframe_thresh = 0
        cfg.rc_min_quantizer = 2
        cfg.rc_max_quantizer = 56
        cfg.kf_mode = VPX_KF_DISABLED
        if pattern.layerCount > 1 {
            cfg.ts_number_layers = UInt32(pattern.layerCount)
            cfg.ts_periodicity = UInt32(pattern.periodicity)
            let decimators = pattern.rateDecimators
            let shares = pattern.cumulativeBitratePercent
            withUnsafeMutableBytes(of: &cfg.ts_rate_decimator) { raw in
                for (i, d) in decimators.enumerated() { raw.storeBytes(of: d, toByteOffset: i * 4, as: UInt32.self) }
            }
            withUnsafeMutableBytes(of: &cfg.ts_target_bitrate) { raw in
                for (i, s) in shares.enumerated() {
                    raw.storeBytes(of: kbps * s / 100, toByteOffset: i * 4, as: UInt32.self)
                }
            }
            withUnsafeMutableBytes(of: &cfg.ts_layer_id) { raw in
                for (i, p) in pattern.positions.enumerated() {
                    raw.storeBytes(of: UInt32(p.layer), toByteOffset: i * 4, as: UInt32.self)
                }
            }
        }

        var codec = vpx_codec_ctx_t()
        status = vpx_codec_enc_init_ver(&codec, iface, &cfg, 0, encoderABIVersion)
        guard status == VPX_CODEC_OK else { throw .codec(Int32(status.rawValue)) }
        defer { vpx_codec_destroy(&codec) }

        let picture = TestPattern(width: width, height: height, grain: grain)
        var pixels = [UInt8](repeating: 0, count: picture.byteCount)
        let frameCount = seconds * framesPerSecond
        let duration = Duration.seconds(1) / framesPerSecond
        var frames: [EncodedFrame] = []
        frames.reserveCapacity(frameCount)
        for index in 0..<frameCount {
            picture.render(index: index, into: &pixels)
            let sinceKeyframe = index % keyframeInterval
            let position = pattern.position(framesSinceKeyframe: sinceKeyframe)
            let flags = sinceKeyframe == 0 ? vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) : referenceFlags(position)
            var output: [UInt8] = []
            var isKey = false
            let result: vpx_codec_err_t = pixels.withUnsafeMutableBufferPointer { buffer in
                var image = vpx_image_t()
                guard vpx_img_wrap(&image, VPX_IMG_FMT_I420, UInt32(width), UInt32(height), 1, buffer.baseAddress) != nil
                else { return VPX_CODEC_INVALID_PARAM }
                let encoded = vpx_codec_encode(
                    &codec, &image, vpx_codec_pts_t(index), 1, flags, UInt(VPX_DL_REALTIME))
                guard encoded == VPX_CODEC_OK else { return encoded }
                var iterator: vpx_codec_iter_t? = nil
                while let packet = vpx_codec_get_cx_data(&codec, &iterator) {
                    guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
                    let frame = packet.pointee.data.frame
                    if let base = frame.buf {
                        output.append(contentsOf: UnsafeRawBufferPointer(start: base, count: frame.sz))
                    }
                    isKey = isKey || frame.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0
                }
                return VPX_CODEC_OK
            }
            guard result == VPX_CODEC_OK else { throw .codec(Int32(result.rawValue)) }
            // With frame dropping off and no lag, libvpx returns exactly one
            // frame per input; anything else would break the layer pattern.
            guard !output.isEmpty else { throw .codec(-1) }
            frames.append(
                EncodedFrame(
                    bytes: output, isKeyframe: isKey, temporalLayer: isKey ? 0 : position.layer,
                    layerSync: isKey ? true : position.layerSync, duration: duration))
        }
        return VideoClip(
            width: width, height: height, framesPerSecond: framesPerSecond, temporalLayers: pattern.layerCount,
            keyframeInterval: keyframeInterval, targetBitrate: targetBitrate, frames: frames)
    }

    /// `VPX_ENCODER_ABI_VERSION`, which Swift does not import (a macro of
    /// three terms); spelled here from the same header definitions.
    static var encoderABIVersion: Int32 { 15 + VPX_CODEC_ABI_VERSION + VPX_EXT_RATECTRL_ABI_VERSION }

    /// libvpx per-frame flags for a delta frame at `position`: every
    /// reference the pattern does not read gets `NO_REF`, every buffer it
    /// does not refresh gets `NO_UPD`.
    static func referenceFlags(_ position: TemporalLayerPattern.Position) -> vpx_enc_frame_flags_t {
        var flags = Int(VP8_EFLAG_NO_REF_ARF) | Int(VP8_EFLAG_NO_UPD_ARF)
        if !position.readsLast { flags |= Int(VP8_EFLAG_NO_REF_LAST) }
        if !position.readsGolden { flags |= Int(VP8_EFLAG_NO_REF_GF) }
        if !position.refreshesLast { flags |= Int(VP8_EFLAG_NO_UPD_LAST) }
        if !position.refreshesGolden { flags |= Int(VP8_EFLAG_NO_UPD_GF) }
        return vpx_enc_frame_flags_t(flags)
    }
}
