import COpenH264
import Wire

/// Owns one libopenh264 encoder: I420 pictures in, H.264 access units out
/// in the Annex B byte stream format (every NAL unit behind a 4-byte start
/// code, H.264 Annex B.1), as an RTP packetizer reads them
/// (`H264Packetizer`).
///
/// Settings are those of a real-time sender: camera real-time usage,
/// bitrate rate control, no frame
/// skipping (one access unit per picture, so the clip keeps its frame
/// count), one slice per picture, CAVLC, one reference frame, constrained
/// baseline at level 3.1 (what `profile-level-id=42e01f` announces, RFC
/// 6184 section 8.1), SPS and PPS with every IDR (so every IDR is a switch
/// point, `H264KeyframeTracker`), no automatic IDRs: the caller forces them.
package struct H264Encoder: ~Copyable {
    private let encoder: UnsafeMutablePointer<ISVCEncoder?>
    package let width: Int
    package let height: Int

    /// - Parameters: `width` and `height` even, 16...1920 x 16...1088 (level
    ///   3.1 holds 1280x720 at 30 fps); `framesPerSecond` 1...60;
    ///   `targetBitrate` 10 kbit/s...20 Mbit/s; else `.invalidParameter`.
    package init(width: Int, height: Int, framesPerSecond: Int, targetBitrate: Bitrate) throws(BotMediaError) {
        guard (16...1920).contains(width), (16...1088).contains(height), width % 2 == 0, height % 2 == 0,
            (1...60).contains(framesPerSecond),
            (10_000...20_000_000).contains(targetBitrate.bitsPerSecond)
        else { throw .invalidParameter }
        var handle: UnsafeMutablePointer<ISVCEncoder?>?
        guard WelsCreateSVCEncoder(&handle) == 0, let handle else { throw .codec(-1) }
        var quiet = Int32(WELS_LOG_QUIET)
        _ = swiftlet_h264enc_set_option(handle, ENCODER_OPTION_TRACE_LEVEL, &quiet)
        var p = SEncParamExt()
        var status = swiftlet_h264enc_default_params(handle, &p)
        if status == 0 {
            let bps = Int32(targetBitrate.bitsPerSecond)
            p.iUsageType = CAMERA_VIDEO_REAL_TIME
            p.iPicWidth = Int32(width)
            p.iPicHeight = Int32(height)
            p.iTargetBitrate = bps
            p.iMaxBitrate = bps
            p.iRCMode = RC_BITRATE_MODE
            p.fMaxFrameRate = Float(framesPerSecond)
            p.bEnableFrameSkip = false
            p.uiIntraPeriod = 0
            p.iTemporalLayerNum = 1
            p.iSpatialLayerNum = 1
            p.iNumRefFrame = 1
            p.iEntropyCodingModeFlag = 0
            p.iMultipleThreadIdc = 1
            p.eSpsPpsIdStrategy = CONSTANT_ID
            p.bEnableDenoise = false
            p.bEnableBackgroundDetection = false
            p.bEnableSceneChangeDetect = false
            p.sSpatialLayers.0.iVideoWidth = Int32(width)
            p.sSpatialLayers.0.iVideoHeight = Int32(height)
            p.sSpatialLayers.0.fFrameRate = Float(framesPerSecond)
            p.sSpatialLayers.0.iSpatialBitrate = bps
            p.sSpatialLayers.0.iMaxSpatialBitrate = bps
            p.sSpatialLayers.0.uiProfileIdc = PRO_BASELINE
            p.sSpatialLayers.0.uiLevelIdc = LEVEL_3_1
            p.sSpatialLayers.0.sSliceArgument.uiSliceMode = SM_SINGLE_SLICE
            status = swiftlet_h264enc_initialize(handle, &p)
        }
        guard status == 0 else {
            WelsDestroySVCEncoder(handle)
            throw .codec(Int32(status))
        }
        encoder = handle
        self.width = width
        self.height = height
    }

    deinit {
        _ = swiftlet_h264enc_uninitialize(encoder)
        WelsDestroySVCEncoder(encoder)
    }

    /// One encoded picture: the Annex B bytes and whether it is an IDR.
    package struct AccessUnit: Equatable, Sendable {
        package var bytes: [UInt8]
        package var isIDR: Bool
    }

    /// Encodes one I420 picture (`width` x `height`, planes Y, U, V without
    /// padding, at least `width * height * 3 / 2` bytes); `forceIDR` makes
    /// it an IDR. With frame skipping off every picture yields one access
    /// unit; an empty one is `.codec(-1)`.
    package mutating func encode(
        i420 pixels: inout [UInt8], timestampMilliseconds: Int64, forceIDR: Bool
    ) throws(BotMediaError) -> AccessUnit {
        let lumaCount = width * height
        let chromaCount = (width / 2) * (height / 2)
        guard pixels.count >= lumaCount + 2 * chromaCount else { throw .invalidParameter }
        if forceIDR { _ = swiftlet_h264enc_force_idr(encoder) }
        var info = SFrameBSInfo()
        let status: Int32 = pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return -1 }
            var picture = SSourcePicture()
            picture.iColorFormat = Int32(videoFormatI420.rawValue)
            picture.iPicWidth = Int32(width)
            picture.iPicHeight = Int32(height)
            picture.iStride.0 = Int32(width)
            picture.iStride.1 = Int32(width / 2)
            picture.iStride.2 = Int32(width / 2)
            picture.pData.0 = base
            picture.pData.1 = base + lumaCount
            picture.pData.2 = base + lumaCount + chromaCount
            picture.uiTimeStamp = timestampMilliseconds
            return swiftlet_h264enc_encode(encoder, &picture, &info)
        }
        guard status == 0 else { throw .codec(status) }
        var bytes: [UInt8] = []
        withUnsafeBytes(of: &info.sLayerInfo) { raw in
            let layers = raw.bindMemory(to: SLayerBSInfo.self)
            for l in 0..<min(Int(info.iLayerNum), layers.count) {
                let layer = layers[l]
                guard let buffer = layer.pBsBuf, let lengths = layer.pNalLengthInByte else { continue }
                var size = 0
                for n in 0..<Int(layer.iNalCount) { size += Int(lengths[n]) }
                bytes.append(contentsOf: UnsafeBufferPointer(start: buffer, count: size))
            }
        }
        guard !bytes.isEmpty, info.eFrameType != videoFrameTypeSkip else { throw .codec(-1) }
        return AccessUnit(bytes: bytes, isIDR: info.eFrameType == videoFrameTypeIDR)
    }
}
