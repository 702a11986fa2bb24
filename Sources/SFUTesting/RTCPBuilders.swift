import RTCP
import Wire

/// Ready-made RTCP packets for tests of the targets that consume RTCP
/// (stream state, congestion control, the peer session).
package enum RTCPBuilders {
    /// RR with one report block followed by SDES with a CNAME, the shape a
    /// receive-only browser sends.
    package static func receiverReportWithCNAME(sender: SSRC, cname: String, reports: [ReceptionReport] = []) -> [UInt8] {
        RTCPCompoundPacket.serialize([
            .receiverReport(ReceiverReport(ssrc: sender, reports: reports)),
            .sourceDescription(
                SourceDescription(chunks: [SDESChunk(source: sender, items: [SDESItem(type: .cname, text: cname)])])),
        ])
    }

    /// SR (no report blocks) plus SDES CNAME, as a sending browser emits.
    package static func senderReportWithCNAME(sender: SSRC, cname: String, info: SenderInfo) -> [UInt8] {
        RTCPCompoundPacket.serialize([
            .senderReport(SenderReport(ssrc: sender, senderInfo: info)),
            .sourceDescription(
                SourceDescription(chunks: [SDESChunk(source: sender, items: [SDESItem(type: .cname, text: cname)])])),
        ])
    }

    /// A reduced-size (RFC 5506) PLI.
    package static func pictureLossIndication(sender: SSRC, media: SSRC) -> [UInt8] {
        PictureLossIndication(senderSSRC: sender, mediaSSRC: media).serialized()
    }

    /// A reduced-size generic NACK for exactly `lost`.
    package static func nack(sender: SSRC, media: SSRC, lost: [UInt16]) -> [UInt8] {
        TransportLayerNACK(senderSSRC: sender, mediaSSRC: media, lostSequenceNumbers: lost).serialized()
    }

    /// A reduced-size transport-wide CC feedback for `arrivals`; all of them
    /// must fit one feedback (see `TransportLayerCC.build`).
    package static func transportFeedback(sender: SSRC, media: SSRC, count: UInt8, arrivals: [TransportCCArrival]) -> [UInt8] {
        let built = TransportLayerCC.build(senderSSRC: sender, mediaSSRC: media, feedbackPacketCount: count, arrivals: arrivals)
        precondition(built.consumed == arrivals.count, "arrivals do not fit one feedback")
        return built.feedback.serialized()
    }

    /// A reduced-size REMB.
    package static func remb(sender: SSRC, bitrate: Bitrate, ssrcs: [SSRC]) -> [UInt8] {
        ReceiverEstimatedMaximumBitrate(senderSSRC: sender, bitrate: bitrate, ssrcs: ssrcs).serialized()
    }
}
