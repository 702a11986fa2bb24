import Wire

/// A compound RTCP packet read in place, for the media path: the same
/// rules as `RTCPCompoundPacket.parse` (it accepts and rejects exactly the
/// same input, with the same error), but nothing is collected into arrays.
/// The whole compound is validated first (SRTCP authenticates it as one
/// unit, RFC 3711 section 3.4, so one bad packet rejects all of it), then
/// each packet goes to `body` as an `RTCPPacketView` whose lists (report
/// blocks, NACK pairs, FIR entries) read the bytes on demand.
///
/// Allocation: none for SR, RR, SDES, NACK, PLI, FIR, REMB and
/// transport-cc feedback (SDES is walked with the parser's checks,
/// `SourceDescription.validate`). BYE and APP are validated by their
/// parsers, which build arrays: they come once per session, not with every
/// report.
package enum RTCPCompoundView {
    package static func forEachPacket(
        _ bytes: UnsafeRawBufferPointer, _ body: (RTCPPacketView) -> Void
    ) throws(RTCPParseError) {
        try RTCPCompoundPacket.walk(RawSpan(_unsafeBytes: bytes)) { header, range, contentEnd throws(RTCPParseError) in
            _ = try view(header, bytes, range, contentEnd)
        }
        // Validated: the second walk cannot throw on the same bytes.
        try? RTCPCompoundPacket.walk(RawSpan(_unsafeBytes: bytes)) { header, range, contentEnd throws(RTCPParseError) in
            body(try view(header, bytes, range, contentEnd))
        }
    }

    /// One packet (`range`, padding excluded at `contentEnd`) as a view,
    /// checked as `RTCPPacket.parse` checks it.
    private static func view(
        _ header: RTCPHeader, _ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ contentEnd: Int
    ) throws(RTCPParseError) -> RTCPPacketView {
        // The body after the common header, before any padding.
        let body = range.lowerBound + RTCPHeader.byteCount
        let length = contentEnd - body
        func ssrc(_ offset: Int) -> SSRC { SSRC(RTCPPacketView.uint32(bytes, body + offset)) }
        switch header.packetType {
        case RTCPPacketType.senderReport:
            guard length >= 4 + SenderInfo.byteCount else { throw .truncated }
            let blocks = body + 4 + SenderInfo.byteCount
            guard Int(header.count) * ReceptionReport.byteCount <= contentEnd - blocks else { throw .countBeyondPacket }
            let info = SenderInfo(
                ntpTimestamp: UInt64(RTCPPacketView.uint32(bytes, body + 4)) << 32
                    | UInt64(RTCPPacketView.uint32(bytes, body + 8)),
                rtpTimestamp: RTCPPacketView.uint32(bytes, body + 12),
                packetCount: RTCPPacketView.uint32(bytes, body + 16),
                octetCount: RTCPPacketView.uint32(bytes, body + 20))
            return .senderReport(
                ssrc: ssrc(0), senderInfo: info,
                reports: ReceptionReportBlocks(bytes, offset: blocks, count: Int(header.count)))
        case RTCPPacketType.receiverReport:
            guard length >= 4 else { throw .truncated }
            let blocks = body + 4
            guard Int(header.count) * ReceptionReport.byteCount <= contentEnd - blocks else { throw .countBeyondPacket }
            return .receiverReport(
                ssrc: ssrc(0), reports: ReceptionReportBlocks(bytes, offset: blocks, count: Int(header.count)))
        case RTCPPacketType.transportFeedback where header.count == TransportLayerNACK.format:
            guard length >= 8 else { throw .truncated }
            // Trailing bytes short of a pair are ignored, as the parser does.
            let count = (length - 8) / 4
            guard count > 0 else { throw .missingFCI }
            return .transportLayerNACK(
                senderSSRC: ssrc(0), mediaSSRC: ssrc(4), pairs: NACKPairs(bytes, offset: body + 8, count: count))
        case RTCPPacketType.payloadFeedback where header.count == FullIntraRequest.format:
            guard length >= 8, (length - 8) % 8 == 0 else { throw .truncated }
            return .fullIntraRequest(
                senderSSRC: ssrc(0), mediaSSRC: ssrc(4),
                entries: FIREntries(bytes, offset: body + 8, count: (length - 8) / 8))
        case RTCPPacketType.payloadFeedback where header.count == ReceiverEstimatedMaximumBitrate.format:
            guard length >= 8 else { throw .truncated }
            guard length >= 12, RTCPPacketView.uint32(bytes, body + 8) == ReceiverEstimatedMaximumBitrate.identifier
            else { throw .missingREMBIdentifier }
            guard length >= 16 else { throw .truncated }
            let word = RTCPPacketView.uint32(bytes, body + 12)
            guard Int(word >> 24) * 4 <= length - 16 else { throw .countBeyondPacket }
            let packed = word & 0xFF_FFFF
            return .receiverEstimatedMaximumBitrate(
                ReceiverEstimatedMaximumBitrate(
                    senderSSRC: ssrc(0), mediaSSRC: ssrc(4), exponent: UInt8(truncatingIfNeeded: packed >> 18),
                    mantissa: packed & ReceiverEstimatedMaximumBitrate.maximumMantissa, ssrcs: []))
        default:
            // PLI and transport-cc feedback parse without allocating; BYE,
            // APP and unknown packets are checked by their parsers.
            let span = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: bytes[range.lowerBound..<contentEnd]))
            var reader = ByteReader(span, offset: RTCPHeader.byteCount)
            // SDES comes in every browser compound: checked without
            // building its chunks.
            if header.packetType == RTCPPacketType.sourceDescription {
                try SourceDescription.validate(header, &reader)
                return .other(packetType: header.packetType, count: header.count)
            }
            switch try RTCPPacket.parse(header, &reader) {
            case .pictureLossIndication(let pli): return .pictureLossIndication(pli)
            case .transportCCFeedback(let feedback): return .transportCCFeedback(feedback, packet: range)
            default: return .other(packetType: header.packetType, count: header.count)
            }
        }
    }
}
