import Codecs
import SDP
import Wire

/// The kinds of RTP media we negotiate (`m=audio`, `m=video`).
public enum MediaKind: String, Equatable, Hashable, Sendable {
    case audio, video
}

/// The media codecs the SFU forwards.
public enum MediaCodec: Equatable, Hashable, Sendable {
    /// Opus/48000/2 (RFC 7587 section 7).
    case opus
    case video(VideoCodec)

    public var kind: MediaKind { self == .opus ? .audio : .video }

    /// The encoding name as `a=rtpmap` writes it.
    public var encodingName: String {
        switch self {
        case .opus: "opus"
        case .video(.vp8): "VP8"
        case .video(.vp9): "VP9"
        case .video(.h264): "H264"
        case .video(.av1): "AV1"
        }
    }
}

/// One negotiated codec of an m-section: its payload type, the payload
/// type of its RTX stream (RFC 4588 section 8.6, `apt=`) if any, the format
/// parameters as written, and the RTCP feedback kept for it.
public struct CodecDescription: Equatable, Sendable {
    public var codec: MediaCodec
    public var payloadType: PayloadType
    public var clockRate: UInt32
    /// 2 for Opus (RFC 7587 section 7), nil for video.
    public var channels: UInt16?
    /// The `a=fmtp` parameter text, nil when there is none (aiortc sends
    /// Opus without fmtp).
    public var formatParameters: String?
    public var rtxPayloadType: PayloadType?
    /// `nack`, `nack pli`, `ccm fir`, `goog-remb`, `transport-cc` as
    /// (type, parameter) pairs, in the order written.
    public var feedback: [Feedback]

    public struct Feedback: Equatable, Hashable, Sendable {
        public var type: String
        public var parameter: String?
        public init(type: String, parameter: String? = nil) {
            self.type = type
            self.parameter = parameter
        }
        public static let nack = Feedback(type: "nack")
        public static let pictureLossIndication = Feedback(type: "nack", parameter: "pli")
        public static let fullIntraRequest = Feedback(type: "ccm", parameter: "fir")
        public static let receiverEstimatedMaximumBitrate = Feedback(type: "goog-remb")
        public static let transportCC = Feedback(type: "transport-cc")
        /// The feedback the SFU understands, all others are dropped from answers.
        public static let supported: [Feedback] = [
            .nack, .pictureLossIndication, .fullIntraRequest, .receiverEstimatedMaximumBitrate, .transportCC,
        ]
    }

    public init(
        codec: MediaCodec, payloadType: PayloadType, clockRate: UInt32, channels: UInt16? = nil,
        formatParameters: String? = nil, rtxPayloadType: PayloadType? = nil, feedback: [Feedback] = []
    ) {
        self.codec = codec
        self.payloadType = payloadType
        self.clockRate = clockRate
        self.channels = channels
        self.formatParameters = formatParameters
        self.rtxPayloadType = rtxPayloadType
        self.feedback = feedback
    }

    /// Opus/48000/2 with in-band FEC, as Chromium writes it.
    public static func opus(payloadType: PayloadType, formatParameters: String? = "minptime=10;useinbandfec=1") -> Self {
        CodecDescription(
            codec: .opus, payloadType: payloadType, clockRate: 48000, channels: 2,
            formatParameters: formatParameters, feedback: [.transportCC])
    }

    public static let videoFeedback: [Feedback] = [
        .receiverEstimatedMaximumBitrate, .transportCC, .fullIntraRequest, .nack, .pictureLossIndication,
    ]

    public static func vp8(payloadType: PayloadType, rtxPayloadType: PayloadType? = nil) -> Self {
        CodecDescription(
            codec: .video(.vp8), payloadType: payloadType, clockRate: 90000, rtxPayloadType: rtxPayloadType,
            feedback: videoFeedback)
    }

    /// H.264 packetization mode 1 (RFC 6184 section 8.1), constrained
    /// baseline level 3.1 (`42e01f`) unless told otherwise.
    public static func h264(
        payloadType: PayloadType, rtxPayloadType: PayloadType? = nil, profileLevelID: String = "42e01f"
    ) -> Self {
        CodecDescription(
            codec: .video(.h264), payloadType: payloadType, clockRate: 90000,
            formatParameters: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=\(profileLevelID)",
            rtxPayloadType: rtxPayloadType, feedback: videoFeedback)
    }

    /// The payload types on the m= line: the codec, then its RTX.
    var payloadTypes: [PayloadType] { [payloadType] + (rtxPayloadType.map { [$0] } ?? []) }

    /// `a=rtpmap`, `a=rtcp-fb`, `a=fmtp` for the codec, then `a=rtpmap` and
    /// `a=fmtp:<rtx> apt=<pt>` for its RTX (RFC 4588 section 8.6), in the
    /// order libwebrtc writes them.
    var attributes: [Attribute] {
        var out: [Attribute] = [
            .rtpmap(RTPMap(payloadType: payloadType, encodingName: codec.encodingName, clockRate: clockRate, channels: channels))
        ]
        for f in feedback {
            out.append(.rtcpFeedback(RTCPFeedback(payloadType: payloadType, type: f.type, parameter: f.parameter)))
        }
        if let formatParameters { out.append(.fmtp(FormatParameters(payloadType: payloadType, raw: formatParameters))) }
        if let rtx = rtxPayloadType {
            out.append(.rtpmap(RTPMap(payloadType: rtx, encodingName: "rtx", clockRate: clockRate)))
            out.append(.fmtp(FormatParameters(payloadType: rtx, raw: "apt=\(payloadType.rawValue)")))
        }
        return out
    }
}
