import Codecs
import RTP
import Wire

/// What the rewriter needs to know of one incoming packet: a few header
/// fields and, for VP8, the payload descriptor. A plain value; building it
/// allocates nothing.
package struct SourcePacket: Equatable, Sendable {
    package var ssrc: SSRC
    package var sequenceNumber: UInt16
    package var timestamp: UInt32
    /// Payload bytes without padding; 0 means a padding-only packet.
    package var payloadLength: Int
    /// Whether a subscriber's decoder can start at this packet: the first
    /// packet of a keyframe for video, any packet for audio. Only such a
    /// packet can make its SSRC the current source.
    package var isSwitchPoint: Bool
    /// The VP8 payload descriptor, for picture ID and TL0PICIDX continuity.
    package var vp8: VP8PayloadDescriptor?

    package init(
        ssrc: SSRC, sequenceNumber: UInt16, timestamp: UInt32, payloadLength: Int = 1, isSwitchPoint: Bool = false,
        vp8: VP8PayloadDescriptor? = nil
    ) {
        self.ssrc = ssrc
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.payloadLength = payloadLength
        self.isSwitchPoint = isSwitchPoint
        self.vp8 = vp8
    }

    /// From a parsed header. For VP8 pass the descriptor; `isSwitchPoint`
    /// then defaults to its keyframe flag.
    package init(header: RTPHeader, vp8: VP8PayloadDescriptor? = nil, isSwitchPoint: Bool? = nil) {
        self.init(
            ssrc: header.ssrc, sequenceNumber: header.sequenceNumber, timestamp: header.timestamp,
            payloadLength: header.payloadLength, isSwitchPoint: isSwitchPoint ?? vp8?.isKeyframe ?? false, vp8: vp8)
    }
}
