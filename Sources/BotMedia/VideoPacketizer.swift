import Codecs
import RTP
import Wire

/// The RTP packetizer of one published video layer: RFC 7741 for a VP8
/// clip, RFC 6184 (mode 1) for an H.264 clip. Both write whole packets
/// into the caller's buffer with the same extensions and no allocation.
enum VideoPacketizer: Sendable {
    case vp8(VP8Packetizer)
    case h264(H264Packetizer)

    /// The packetizer for `codec`; `.invalidParameter` for a codec
    /// roombot does not send.
    init(
        codec: VideoCodec, ssrc: SSRC, payloadType: PayloadType, extensionIDs: HeaderExtensionIDs, mid: MID?,
        rid: RID?, initialSequenceNumber: UInt16, initialPictureID: UInt16
    ) throws(BotMediaError) {
        switch codec {
        case .vp8:
            self = .vp8(
                try VP8Packetizer(
                    ssrc: ssrc, payloadType: payloadType, extensionIDs: extensionIDs, mid: mid, rid: rid,
                    initialSequenceNumber: initialSequenceNumber, initialPictureID: initialPictureID))
        case .h264:
            self = .h264(
                try H264Packetizer(
                    ssrc: ssrc, payloadType: payloadType, extensionIDs: extensionIDs, mid: mid, rid: rid,
                    initialSequenceNumber: initialSequenceNumber))
        case .vp9, .av1: throw .invalidParameter
        }
    }

    var sequenceNumber: UInt16 {
        switch self {
        case .vp8(let p): p.sequenceNumber
        case .h264(let p): p.sequenceNumber
        }
    }

    mutating func packetize(
        _ frame: EncodedFrame, rtpTimestamp: UInt32, captureTime: UInt64?, absSendTime: UInt32?,
        transportSequenceNumber: inout UInt16, into buffer: UnsafeMutableRawBufferPointer, emit: (Int) -> Void
    ) throws(BotMediaError) {
        switch self {
        case .vp8(var p):
            defer { self = .vp8(p) }
            try p.packetize(
                frame, rtpTimestamp: rtpTimestamp, captureTime: captureTime, absSendTime: absSendTime,
                transportSequenceNumber: &transportSequenceNumber, into: buffer, emit: emit)
        case .h264(var p):
            defer { self = .h264(p) }
            try p.packetize(
                frame, rtpTimestamp: rtpTimestamp, captureTime: captureTime, absSendTime: absSendTime,
                transportSequenceNumber: &transportSequenceNumber, into: buffer, emit: emit)
        }
    }
}
