import RTCP
import SFUTesting
import Testing
import Wire

@Test func testingBuildersProduceParseablePackets() throws {
    let rr = try parseCompound(RTCPBuilders.receiverReportWithCNAME(sender: SSRC(5), cname: "peer"))
    #expect(rr.packets.count == 2)
    guard case .sourceDescription(let sdes) = rr.packets[1] else { Issue.record("not SDES"); return }
    #expect(sdes.chunks.first?.cname == "peer")
    let sr = try parseCompound(
        RTCPBuilders.senderReportWithCNAME(
            sender: SSRC(5), cname: "peer", info: SenderInfo(ntpTimestamp: 1, rtpTimestamp: 2, packetCount: 3, octetCount: 4)))
    #expect(sr.packets.count == 2)
    #expect(
        try parseSingle(RTCPBuilders.nack(sender: SSRC(1), media: SSRC(2), lost: [7, 9]))
            == .transportLayerNACK(
                TransportLayerNACK(senderSSRC: SSRC(1), mediaSSRC: SSRC(2), pairs: [NACKPair(packetID: 7, lostPackets: 2)])))
    #expect(
        try parseSingle(RTCPBuilders.remb(sender: SSRC(1), bitrate: .kbps(300), ssrcs: [SSRC(2)]))
            == .receiverEstimatedMaximumBitrate(
                ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), exponent: 1, mantissa: 150_000, ssrcs: [SSRC(2)])))
    let twcc = RTCPBuilders.transportFeedback(
        sender: SSRC(1), media: SSRC(2), count: 0,
        arrivals: [
            TransportCCArrival(sequenceNumber: 1, arrival: Instant(nanoseconds: 64_000_000)),
            TransportCCArrival(sequenceNumber: 2, arrival: Instant(nanoseconds: 65_000_000)),
        ])
    guard case .transportLayerCC(let cc) = try parseSingle(twcc) else { Issue.record("not TWCC"); return }
    #expect(cc.referenceTime == 1)
    #expect(cc.statuses == [.receivedSmallDelta(0), .receivedSmallDelta(4)])
    #expect(
        try parseSingle(RTCPBuilders.pictureLossIndication(sender: SSRC(1), media: SSRC(2)))
            == .pictureLossIndication(PictureLossIndication(senderSSRC: SSRC(1), mediaSSRC: SSRC(2))))
}
