import Wire

/// One parsed RTCP packet of a compound.
///
/// Byte ranges inside parsed values (`SenderReport.profileExtension`,
/// `UnknownRTCPPacket.body`) are offsets from the first byte of that
/// packet's own common header; `RTCPCompoundPacket.packetRanges` places
/// each packet in the buffer.
package enum RTCPPacket: Equatable, Sendable {
    case senderReport(SenderReport)
    case receiverReport(ReceiverReport)
    case sourceDescription(SourceDescription)
    case goodbye(Goodbye)
    case applicationDefined(ApplicationDefined)
    case transportLayerNACK(TransportLayerNACK)
    /// Transport-cc feedback to send (built; parsing never yields it).
    case transportLayerCC(TransportLayerCC)
    /// Transport-cc feedback as parsed: validated, not expanded; its
    /// statuses are walked over the packet's bytes (see
    /// `TransportCCFeedback`). Serializes to nothing, as `.unknown` does.
    case transportCCFeedback(TransportCCFeedback)
    case pictureLossIndication(PictureLossIndication)
    case fullIntraRequest(FullIntraRequest)
    case receiverEstimatedMaximumBitrate(ReceiverEstimatedMaximumBitrate)
    /// A packet type, or a feedback FMT, this target does not interpret
    /// (XR, TMMBR, SLI, ...): kept opaque.
    case unknown(UnknownRTCPPacket)

    /// Parses the packet whose header is `header`. `reader` spans exactly the
    /// packet, header included and padding excluded, and stands just past
    /// the header.
    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> RTCPPacket {
        switch header.packetType {
        case RTCPPacketType.senderReport:
            return .senderReport(try SenderReport.parse(header, &reader))
        case RTCPPacketType.receiverReport:
            return .receiverReport(try ReceiverReport.parse(header, &reader))
        case RTCPPacketType.sourceDescription:
            return .sourceDescription(try SourceDescription.parse(header, &reader))
        case RTCPPacketType.goodbye:
            return .goodbye(try Goodbye.parse(header, &reader))
        case RTCPPacketType.applicationDefined:
            return .applicationDefined(try ApplicationDefined.parse(header, &reader))
        case RTCPPacketType.transportFeedback where header.count == TransportLayerNACK.format:
            return .transportLayerNACK(try TransportLayerNACK.parse(header, &reader))
        case RTCPPacketType.transportFeedback where header.count == TransportLayerCC.format:
            return .transportCCFeedback(try TransportCCFeedback.parse(header, &reader))
        case RTCPPacketType.payloadFeedback where header.count == PictureLossIndication.format:
            return .pictureLossIndication(try PictureLossIndication.parse(header, &reader))
        case RTCPPacketType.payloadFeedback where header.count == FullIntraRequest.format:
            return .fullIntraRequest(try FullIntraRequest.parse(header, &reader))
        case RTCPPacketType.payloadFeedback where header.count == ReceiverEstimatedMaximumBitrate.format:
            return .receiverEstimatedMaximumBitrate(try ReceiverEstimatedMaximumBitrate.parse(header, &reader))
        default:
            return .unknown(
                UnknownRTCPPacket(
                    packetType: header.packetType, count: header.count,
                    body: reader.offset..<reader.bytes.byteCount))
        }
    }

    /// Appends this packet's bytes. Unknown packets have no bytes of their
    /// own (only a range into the input) and append nothing; likewise an
    /// SR/RR profile-extension range is written as zeros here (use the
    /// type's `serialize(into:profileExtension:)` to supply its bytes).
    package func serialize(into writer: inout ByteWriter) {
        switch self {
        case .senderReport(let p): p.serialize(into: &writer)
        case .receiverReport(let p): p.serialize(into: &writer)
        case .sourceDescription(let p): p.serialize(into: &writer)
        case .goodbye(let p): p.serialize(into: &writer)
        case .applicationDefined(let p): p.serialize(into: &writer)
        case .transportLayerNACK(let p): p.serialize(into: &writer)
        case .transportLayerCC(let p): p.serialize(into: &writer)
        case .pictureLossIndication(let p): p.serialize(into: &writer)
        case .fullIntraRequest(let p): p.serialize(into: &writer)
        case .receiverEstimatedMaximumBitrate(let p): p.serialize(into: &writer)
        case .transportCCFeedback, .unknown: break
        }
    }
}

/// A packet kept opaque: its type, its 5-bit count/FMT field and where its
/// body (after the 4-byte common header, before any padding) lies, as
/// offsets from the packet's first byte.
package struct UnknownRTCPPacket: Equatable, Sendable {
    package var packetType: UInt8
    package var count: UInt8
    package var body: Range<Int>

    package init(packetType: UInt8, count: UInt8, body: Range<Int>) {
        self.packetType = packetType
        self.count = count
        self.body = body
    }
}

extension ByteReader {
    /// An SSRC field.
    @inline(__always)
    mutating func ssrc(or error: RTCPParseError) throws(RTCPParseError) -> SSRC {
        SSRC(try uint32(or: error))
    }
}
