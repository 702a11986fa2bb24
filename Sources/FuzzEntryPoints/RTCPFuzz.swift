import RTCP
import Wire

extension FuzzEntryPoints {
    /// Parses the bytes as an RTCP compound. When that succeeds, checks that
    /// the packet ranges tile the input exactly and that every packet type
    /// this target builds serializes and re-parses to an equal value.
    public static func rtcp(_ data: UnsafeRawBufferPointer) {
        let input = RawSpan(_unsafeBytes: data)
        let parsed = try? RTCPCompoundPacket.parse(input)
        checkRTCPView(data, against: parsed)
        guard let compound = parsed else { return }
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

    /// The in-place view accepts exactly what the parser accepts and reads
    /// the same values for the types the media path acts on.
    private static func checkRTCPView(_ data: UnsafeRawBufferPointer, against parsed: RTCPCompoundPacket?) {
        var index = 0
        let accepted: Bool
        do throws(RTCPParseError) {
            try RTCPCompoundView.forEachPacket(data) { view in
                guard let compound = parsed, index < compound.packets.count else {
                    preconditionFailure("the view handed out a packet the parser rejected")
                }
                switch (view, compound.packets[index]) {
                case (.senderReport(let ssrc, let info, let reports), .senderReport(let sr)):
                    precondition(ssrc == sr.ssrc && info == sr.senderInfo && Array(reports) == sr.reports)
                case (.receiverReport(let ssrc, let reports), .receiverReport(let rr)):
                    precondition(ssrc == rr.ssrc && Array(reports) == rr.reports)
                case (.transportLayerNACK(let sender, let media, let pairs), .transportLayerNACK(let nack)):
                    precondition(sender == nack.senderSSRC && media == nack.mediaSSRC && Array(pairs) == nack.pairs)
                case (.fullIntraRequest(let sender, let media, let entries), .fullIntraRequest(let fir)):
                    precondition(sender == fir.senderSSRC && media == fir.mediaSSRC && Array(entries) == fir.entries)
                case (.receiverEstimatedMaximumBitrate(let remb), .receiverEstimatedMaximumBitrate(let parsed)):
                    precondition(remb.bitrate == parsed.bitrate && remb.senderSSRC == parsed.senderSSRC)
                case (.pictureLossIndication(let a), .pictureLossIndication(let b)): precondition(a == b)
                case (.transportCCFeedback(let a, let range), .transportCCFeedback(let b)):
                    precondition(a == b && range == compound.packetRanges[index])
                case (.other, .sourceDescription), (.other, .goodbye), (.other, .applicationDefined), (.other, .unknown): break
                default: preconditionFailure("the view and the parser disagree on packet \(index)")
                }
                index += 1
            }
            accepted = true
        } catch {
            accepted = false
        }
        precondition(accepted == (parsed != nil), "the view and the parser disagree on acceptance")
        precondition(!accepted || index == parsed?.packets.count)
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
