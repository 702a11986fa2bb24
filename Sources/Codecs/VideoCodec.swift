import Wire

/// Video codecs the SFU forwards. VP9 (draft-ietf-payload-vp9) and AV1
/// (whose layering lives in the dependency descriptor header extension)
/// are named here so that callers switch over them already, but their
/// descriptors are not parsed yet: `PayloadDescriptor` returns
/// `.unsupported` for them.
package enum VideoCodec: Equatable, Hashable, Sendable {
    case vp8, vp9, h264, av1
}

/// The parsed payload descriptor of one video RTP payload.
package enum PayloadDescriptor: Equatable, Sendable {
    case vp8(VP8PayloadDescriptor)
    case h264(H264PayloadDescriptor)
    /// A codec whose descriptor is not parsed yet (VP9, AV1).
    case unsupported(VideoCodec)

    package init(codec: VideoCodec, payload: RawSpan) throws(CodecParseError) {
        switch codec {
        case .vp8: self = .vp8(try VP8PayloadDescriptor(parsing: payload))
        case .h264: self = .h264(try H264PayloadDescriptor(parsing: payload))
        case .vp9, .av1: self = .unsupported(codec)
        }
    }

    /// Whether the packet starts a keyframe; nil when the codec is not
    /// parsed, so the caller cannot mistake "unknown" for "no".
    package var isKeyframe: Bool? {
        switch self {
        case .vp8(let d): return d.isKeyframe
        case .h264(let d): return d.isKeyframe
        case .unsupported: return nil
        }
    }
}
