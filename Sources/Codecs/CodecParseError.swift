/// Why an RTP payload's descriptor was rejected. A bad payload costs one
/// packet: every length and count is checked against the bytes present.
package enum CodecParseError: Error, Equatable, Sendable {
    /// The RTP payload has no bytes at all.
    case empty
    /// A field or unit that the descriptor announces is not all there.
    case truncated
    /// H264: NAL unit type 0, 30 or 31, which RFC 6184 leaves undefined.
    case undefinedNALUnitType(UInt8)
    /// H264: a STAP-A aggregation unit of size 0 (RFC 6184 section 5.7.1).
    case emptyAggregationUnit
    /// H264: an FU-A with both start and end bits (RFC 6184 section 5.8).
    case invalidFragmentationUnit
    /// H264: the unit given as a sequence parameter set is of another type.
    case notSequenceParameterSet
    /// H264: an SPS field beyond what H.264 section 7.4.2.1.1 allows (or
    /// an Exp-Golomb code longer than 32 bits), or no picture left after
    /// cropping.
    case invalidSequenceParameterSet
    /// Opus: code 3 frame count 0 or above 48 (RFC 6716 section 3.2.5).
    case invalidFrameCount(UInt8)
    /// Opus: the packet would hold more than 120 ms of audio.
    case durationTooLong
    /// Opus: a code 1 packet whose two frames cannot be the same size
    /// (RFC 6716 section 3.2.2).
    case invalidFrameLengths
    /// VP8: the frame tag's P bit says interframe, so no keyframe header
    /// follows (RFC 6386 section 9.1).
    case notVP8Keyframe
    /// VP8: a keyframe without the start code 9d 01 2a (RFC 6386 section
    /// 9.1).
    case invalidVP8StartCode
    /// VP8: a keyframe of width or height 0, or a version above 3.
    case invalidVP8FrameHeader
}
