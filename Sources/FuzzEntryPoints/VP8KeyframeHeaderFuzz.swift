import Codecs
import Wire

extension FuzzEntryPoints {
    /// Runs `VP8KeyframeDimensions` over the bytes as a VP8 payload header
    /// and, through `VP8PayloadDescriptor`, as a whole RTP payload. When it
    /// parses: sizes are 14-bit and non-zero, scales 2-bit, the header was
    /// all there, writing the values back gives the same parse, and the
    /// descriptor's own keyframe size agrees.
    public static func vp8KeyframeHeader(_ data: UnsafeRawBufferPointer) {
        let bytes = RawSpan(_unsafeBytes: data)
        if let d = try? VP8KeyframeDimensions(parsing: bytes) {
            check(d, available: data.count)
            let w = d.width | UInt16(d.horizontalScale) << 14
            let h = d.height | UInt16(d.verticalScale) << 14
            let rebuilt: [UInt8] = [
                0x10, 0x00, 0x00, 0x9D, 0x01, 0x2A,
                UInt8(truncatingIfNeeded: w), UInt8(truncatingIfNeeded: w >> 8),
                UInt8(truncatingIfNeeded: h), UInt8(truncatingIfNeeded: h >> 8),
            ]
            guard let again = try? VP8KeyframeDimensions(parsing: rebuilt.span.bytes) else {
                preconditionFailure("rebuilt VP8 keyframe header does not parse")
            }
            precondition(again == d)
        }
        if let descriptor = try? VP8PayloadDescriptor(parsing: bytes),
            let d = try? VP8KeyframeDimensions(rtpPayload: bytes, descriptor: descriptor)
        {
            check(d, available: data.count - descriptor.payloadHeaderOffset)
            precondition(descriptor.isKeyframe)
            precondition(descriptor.keyframeWidth == d.width && descriptor.keyframeHeight == d.height)
        }
    }

    private static func check(_ d: VP8KeyframeDimensions, available: Int) {
        precondition(available >= VP8KeyframeDimensions.headerLength)
        precondition(d.width > 0 && d.width <= 0x3FFF && d.height > 0 && d.height <= 0x3FFF)
        precondition(d.horizontalScale <= 3 && d.verticalScale <= 3)
    }
}
