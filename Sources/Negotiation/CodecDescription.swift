import Codecs
import SDP
import Wire

/// The kinds of RTP media we negotiate (`m=audio`, `m=video`).
package enum MediaKind: String, Equatable, Hashable, Sendable {
    case audio, video
}

/// The media codecs the SFU forwards.
package enum MediaCodec: Equatable, Hashable, Sendable {
    /// Opus/48000/2 (RFC 7587 section 7).
    case opus
    case video(VideoCodec)

    package var kind: MediaKind { self == .opus ? .audio : .video }

    /// The encoding name as `a=rtpmap` writes it.
    package var encodingName: String {
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
package struct CodecDescription: Equatable, Sendable {
    package var codec: MediaCodec
    package var payloadType: PayloadType
    package var clockRate: UInt32
    /// 2 for Opus (RFC 7587 section 7), nil for video.
    package var channels: UInt16?
    /// The `a=fmtp` parameter text, nil when there is none (aiortc sends
    /// Opus without fmtp).
    package var formatParameters: String?
    package var rtxPayloadType: PayloadType?
    /// `nack`, `nack pli`, `ccm fir`, `goog-remb`, `transport-cc` as
    /// (type, parameter) pairs, in the order written.
    package var feedback: [Feedback]

    package struct Feedback: Equatable, Hashable, Sendable {
        package var type: String
        package var parameter: String?
        package init(type: String, parameter: String? = nil) {
            self.type = type
            self.parameter = parameter
        }
        package static let nack = Feedback(type: "nack")
        package static let pictureLossIndication = Feedback(type: "nack", parameter: "pli")
        package static let fullIntraRequest = Feedback(type: "ccm", parameter: "fir")
        package static let receiverEstimatedMaximumBitrate = Feedback(type: "goog-remb")
        package static let transportCC = Feedback(type: "transport-cc")
        /// The feedback the SFU understands, all others are dropped from answers.
        package static let supported: [Feedback] = [
            .nack, .pictureLossIndication, .fullIntraRequest, .receiverEstimatedMaximumBitrate, .transportCC,
        ]
    }

    package init(
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
    package static func opus(payloadType: PayloadType, formatParameters: String? = "minptime=10;useinbandfec=1") -> Self {
        CodecDescription(
            codec: .opus, payloadType: payloadType, clockRate: 48000, channels: 2,
            formatParameters: formatParameters, feedback: [.transportCC])
    }

    package static let videoFeedback: [Feedback] = [
        .receiverEstimatedMaximumBitrate, .transportCC, .fullIntraRequest, .nack, .pictureLossIndication,
    ]

    package static func vp8(payloadType: PayloadType, rtxPayloadType: PayloadType? = nil) -> Self {
        CodecDescription(
            codec: .video(.vp8), payloadType: payloadType, clockRate: 90000, rtxPayloadType: rtxPayloadType,
            feedback: videoFeedback)
    }

    /// H.264 packetization mode 1 (RFC 6184 section 8.1), constrained
    /// baseline level 3.1 (`42e01f`) unless told otherwise.
    package static func h264(
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
