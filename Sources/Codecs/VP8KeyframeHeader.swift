import Wire

/// The size of a VP8 keyframe, from the uncompressed header at the start
/// of the VP8 payload (RFC 6386 section 9.1; RFC 7741 section 4.3), which
/// follows the payload descriptor in the first packet of the frame:
///
///     frame tag, 3 bytes little-endian:
///       bit 0 P (0 = keyframe), bits 1-3 version, bit 4 show_frame,
///       bits 5-23 first partition size
///     start code 9d 01 2a (keyframes only)
///     16 bits little-endian: 14-bit width, 2-bit horizontal scale
///     16 bits little-endian: 14-bit height, 2-bit vertical scale
///
/// The worker learns each simulcast layer's resolution from its keyframes.
package struct VP8KeyframeDimensions: Equatable, Sendable {
    package static let headerLength = 10

    /// Width and height in pixels (14 bits each, never 0).
    package var width: UInt16
    package var height: UInt16
    /// The upscaling the decoder is asked for (0: none, 1: 5/4, 2: 5/3,
    /// 3: 2).
    package var horizontalScale: UInt8
    package var verticalScale: UInt8

    package init(width: UInt16, height: UInt16, horizontalScale: UInt8 = 0, verticalScale: UInt8 = 0) {
        self.width = width
        self.height = height
        self.horizontalScale = horizontalScale
        self.verticalScale = verticalScale
    }

    /// Parses the VP8 payload header: `payload` starts at the frame tag
    /// (the RTP payload after `VP8PayloadDescriptor.payloadHeaderOffset`).
    package init(parsing payload: RawSpan) throws(CodecParseError) {
        guard payload.byteCount > 0 else { throw .empty }
        var reader = ByteReader(payload)
        let tag = try reader.uint8(or: CodecParseError.truncated)
        guard tag & 0x01 == 0 else { throw .notVP8Keyframe }
        // Versions 0...3 are defined (section 9.1); the rest is reserved.
        guard (tag >> 1) & 0x07 <= 3 else { throw .invalidVP8FrameHeader }
        _ = try reader.uint8(or: CodecParseError.truncated)
        _ = try reader.uint8(or: CodecParseError.truncated)
        let s0 = try reader.uint8(or: CodecParseError.truncated)
        let s1 = try reader.uint8(or: CodecParseError.truncated)
        let s2 = try reader.uint8(or: CodecParseError.truncated)
        guard s0 == 0x9D, s1 == 0x01, s2 == 0x2A else { throw .invalidVP8StartCode }
        let w0 = try reader.uint8(or: CodecParseError.truncated)
        let w1 = try reader.uint8(or: CodecParseError.truncated)
        let h0 = try reader.uint8(or: CodecParseError.truncated)
        let h1 = try reader.uint8(or: CodecParseError.truncated)
        let w = UInt16(w1) << 8 | UInt16(w0)
        let h = UInt16(h1) << 8 | UInt16(h0)
        width = w & 0x3FFF
        height = h & 0x3FFF
        horizontalScale = UInt8(truncatingIfNeeded: w >> 14)
        verticalScale = UInt8(truncatingIfNeeded: h >> 14)
        guard width > 0, height > 0 else { throw .invalidVP8FrameHeader }
    }

    /// The dimensions in the first packet of a VP8 keyframe: `rtpPayload`
    /// is the whole RTP payload and `descriptor` was parsed from it. Throws
    /// `.notVP8Keyframe` when the descriptor says the packet does not
    /// start a keyframe.
    package init(rtpPayload: RawSpan, descriptor: VP8PayloadDescriptor) throws(CodecParseError) {
        guard descriptor.isKeyframe else { throw .notVP8Keyframe }
        let start = descriptor.payloadHeaderOffset
        guard start >= 0, start < rtpPayload.byteCount else { throw .truncated }
        try self.init(parsing: rtpPayload.extracting(start..<rtpPayload.byteCount))
    }
}
