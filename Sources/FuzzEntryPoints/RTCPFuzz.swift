import RTCP
import Wire

extension FuzzEntryPoints {
    /// Parses the bytes as an RTCP compound. When that succeeds, checks that
    /// the packet ranges tile the input exactly and that every packet type
    /// this target builds serializes and re-parses to an equal value.
    public static func rtcp(_ data: UnsafeRawBufferPointer) {
        let input = RawSpan(_unsafeBytes: data)
        guard let compound = try? RTCPCompoundPacket.parse(input) else { return }
        precondition(compound.packets.count == compound.packetRanges.count)
        precondition(!compound.packets.isEmpty && compound.packets.count <= RTCPCompoundPacket.maximumPackets)
        var expectedStart = 0
        for (packet, range) in zip(compound.packets, compound.packetRanges) {
            precondition(range.lowerBound == expectedStart && range.count >= 4 && range.count % 4 == 0)
            expectedStart = range.upperBound
            checkRTCPRoundTrip(packet, packetRange: range, data: data)
        }
        precondition(expectedStart == data.count, "packets must cover the whole compound")
    }

    private static func checkRTCPRoundTrip(_ packet: RTCPPacket, packetRange: Range<Int>, data: UnsafeRawBufferPointer) {
        switch packet {
        case .unknown(let unknown):
            precondition(unknown.body.lowerBound == 4 && unknown.body.upperBound <= packetRange.count)
        case .transportCCFeedback(let feedback):
            let bytes = UnsafeRawBufferPointer(rebasing: data[packetRange])
            checkTransportFeedbackWalk(feedback, packet: bytes)
            let expanded = TransportLayerCC(expanding: feedback, packet: RawSpan(_unsafeBytes: bytes))
            let again = expanded.serialized()
            guard let reparsed = TransportCCFeedback.parsedPacket(again.span.bytes) else {
                preconditionFailure("rebuilt transport-cc feedback did not re-parse")
            }
            precondition(TransportLayerCC(expanding: reparsed, packet: again.span.bytes) == expanded)
        case .senderReport(let sr):
            let ext = extensionBytes(sr.profileExtension, packetRange: packetRange, data: data)
            var writer = ByteWriter()
            sr.serialize(into: &writer, profileExtension: ext)
            guard case .senderReport(let again) = reparseRTCP(writer.bytes) else { preconditionFailure("SR did not re-parse") }
            precondition(again.ssrc == sr.ssrc && again.senderInfo == sr.senderInfo && again.reports == sr.reports)
            precondition(again.profileExtension == roundedUp(sr.profileExtension))
            precondition(Array(writer.bytes[again.profileExtension].prefix(ext.count)) == ext)
        case .receiverReport(let rr):
            let ext = extensionBytes(rr.profileExtension, packetRange: packetRange, data: data)
            var writer = ByteWriter()
            rr.serialize(into: &writer, profileExtension: ext)
            guard case .receiverReport(let again) = reparseRTCP(writer.bytes) else { preconditionFailure("RR did not re-parse") }
            precondition(again.ssrc == rr.ssrc && again.reports == rr.reports)
            precondition(again.profileExtension == roundedUp(rr.profileExtension))
            precondition(Array(writer.bytes[again.profileExtension].prefix(ext.count)) == ext)
        case .applicationDefined(let app):
            // Data cut short by odd padding comes back zero-filled to 32 bits.
            guard case .applicationDefined(let again) = reparseRTCP(app.serialized()) else {
                preconditionFailure("APP did not re-parse")
            }
            var padded = app
            padded.data += [UInt8](repeating: 0, count: (4 - app.data.count % 4) % 4)
            precondition(again == padded)
        default:
            var writer = ByteWriter()
            packet.serialize(into: &writer)
            precondition(reparseRTCP(writer.bytes) == packet, "rebuilt packet must re-parse to an equal value")
        }
    }

    private static func reparseRTCP(_ bytes: [UInt8]) -> RTCPPacket? {
        guard let compound = try? RTCPCompoundPacket.parse(bytes.span.bytes), compound.packets.count == 1 else { return nil }
        return compound.packets.first
    }

    private static func extensionBytes(_ range: Range<Int>, packetRange: Range<Int>, data: UnsafeRawBufferPointer) -> [UInt8] {
        precondition(range.lowerBound >= 4 && range.upperBound <= packetRange.count)
        return Array(data[(packetRange.lowerBound + range.lowerBound)..<(packetRange.lowerBound + range.upperBound)])
    }

    private static func roundedUp(_ range: Range<Int>) -> Range<Int> {
        range.lowerBound..<range.lowerBound + (range.count + 3) / 4 * 4
    }
}
