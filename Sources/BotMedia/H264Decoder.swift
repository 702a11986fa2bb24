import COpenH264
import Wire

/// Owns one libopenh264 decoder: decodes whole access units in the Annex
/// B byte stream format (what `H264FrameAssembler` reassembles from RTP)
/// and reports the size of the picture each one produced. Error
/// concealment is off, so a picture whose references are missing is an
/// error here, not a smeared frame: that is what a subscriber bot counts.
package struct H264Decoder: ~Copyable {
    private let decoder: UnsafeMutablePointer<ISVCDecoder?>

    package init() throws(BotMediaError) {
        var handle: UnsafeMutablePointer<ISVCDecoder?>?
        guard WelsCreateDecoder(&handle) == 0, let handle else { throw .codec(-1) }
        var quiet = Int32(WELS_LOG_QUIET)
        _ = swiftlet_h264dec_set_option(handle, DECODER_OPTION_TRACE_LEVEL, &quiet)
        var p = SDecodingParam()
        p.eEcActiveIdc = ERROR_CON_DISABLE
        p.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC
        let status = swiftlet_h264dec_initialize(handle, &p)
        guard status == 0 else {
            WelsDestroyDecoder(handle)
            throw .codec(Int32(truncatingIfNeeded: status))
        }
        decoder = handle
    }

    deinit {
        _ = swiftlet_h264dec_uninitialize(decoder)
        WelsDestroyDecoder(decoder)
    }

    /// Decodes one access unit; returns the width and height of the
    /// picture it produced, or nil when it produced none (parameter sets
    /// only). A corrupt unit, or a P picture whose references the decoder
    /// lacks, throws `.codec` with openh264's DECODING_STATE bits.
    package mutating func decode(_ accessUnit: RawSpan) throws(BotMediaError) -> (width: Int, height: Int)? {
        var info = SBufferInfo()
        let state = accessUnit.withUnsafeBytes { bytes -> DECODING_STATE in
            guard let base = bytes.baseAddress, bytes.count > 0, bytes.count <= Int(Int32.max) else {
                return dsInvalidArgument
            }
            // The three plane pointers openh264 writes, on the stack.
            var planes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) =
                (nil, nil, nil)
            return withUnsafeMutablePointer(to: &planes) { tuple in
                tuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 3) { p in
                    swiftlet_h264dec_decode(
                        decoder, base.assumingMemoryBound(to: UInt8.self), Int32(bytes.count), p, &info)
                }
            }
        }
        guard state == dsErrorFree else { throw .codec(Int32(bitPattern: state.rawValue)) }
        guard info.iBufferStatus == 1 else { return nil }
        let buffer = info.UsrData.sSystemBuffer
        return (Int(buffer.iWidth), Int(buffer.iHeight))
    }
}
