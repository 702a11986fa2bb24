import CVPX

/// Owns one libvpx VP8 decoder: decodes whole VP8 frames (RFC 6386) and
/// reports the size of the picture each one produced. Bots use it to check
/// sampled streams; tests use it to prove clips decode.
package struct VP8Decoder: ~Copyable {
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>

    package init() throws(BotMediaError) {
        context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        let status = vpx_codec_dec_init_ver(context, vpx_codec_vp8_dx(), nil, 0, VPX_DECODER_ABI_VERSION)
        guard status == VPX_CODEC_OK else {
            context.deallocate()
            throw .codec(Int32(status.rawValue))
        }
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one frame; returns the width and height of the picture it
    /// produced, or nil when it produced none. A corrupt frame, or a delta
    /// frame whose references the decoder lacks, throws `.codec`.
    package mutating func decode(_ frame: RawSpan) throws(BotMediaError) -> (width: Int, height: Int)? {
        let status = frame.withUnsafeBytes { bytes -> vpx_codec_err_t in
            guard let base = bytes.baseAddress, bytes.count > 0 else { return VPX_CODEC_INVALID_PARAM }
            return vpx_codec_decode(
                context, base.assumingMemoryBound(to: UInt8.self), UInt32(truncatingIfNeeded: bytes.count), nil, 0)
        }
        guard status == VPX_CODEC_OK else { throw .codec(Int32(status.rawValue)) }
        var iterator: vpx_codec_iter_t? = nil
        var size: (width: Int, height: Int)? = nil
        while let image = vpx_codec_get_frame(context, &iterator) {
            size = (Int(image.pointee.d_w), Int(image.pointee.d_h))
        }
        return size
    }
}
