import Foundation
import RTCP
import Testing
import Wire

/// `RTCPCompoundView` must accept and reject exactly what
/// `RTCPCompoundPacket.parse` does, with the same error, and hand out the
/// same values: checked on every fuzz seed, on built compounds, and on
/// random and mutated input (never a trap).
struct RTCPCompoundViewTests {
    /// What both readers agree on, per packet, as comparable text.
    private static func summary(_ packet: RTCPPacket, range: Range<Int>) -> String {
        switch packet {
        case .senderReport(let p): "SR \(p.ssrc) \(p.senderInfo) \(p.reports)"
        case .receiverReport(let p): "RR \(p.ssrc) \(p.reports)"
        case .transportLayerNACK(let p): "NACK \(p.senderSSRC) \(p.mediaSSRC) \(p.pairs)"
        case .transportCCFeedback(let p): "TWCC \(p) \(range)"
        case .pictureLossIndication(let p): "PLI \(p)"
        case .fullIntraRequest(let p): "FIR \(p.senderSSRC) \(p.mediaSSRC) \(p.entries)"
        case .receiverEstimatedMaximumBitrate(let p):
            "REMB \(p.senderSSRC) \(p.mediaSSRC) \(p.exponent) \(p.mantissa)"
        case .sourceDescription: "other 202"
        case .goodbye: "other 203"
        case .applicationDefined: "other 204"
        case .unknown(let p): "other \(p.packetType)"
        case .transportLayerCC: "never parsed"
        }
    }

    private static func summary(_ view: RTCPPacketView) -> String {
        switch view {
        case .senderReport(let ssrc, let info, let reports): "SR \(ssrc) \(info) \(Array(reports))"
        case .receiverReport(let ssrc, let reports): "RR \(ssrc) \(Array(reports))"
        case .transportLayerNACK(let sender, let media, let pairs): "NACK \(sender) \(media) \(Array(pairs))"
        case .transportCCFeedback(let p, let range): "TWCC \(p) \(range)"
        case .pictureLossIndication(let p): "PLI \(p)"
        case .fullIntraRequest(let sender, let media, let entries): "FIR \(sender) \(media) \(Array(entries))"
        case .receiverEstimatedMaximumBitrate(let p):
            "REMB \(p.senderSSRC) \(p.mediaSSRC) \(p.exponent) \(p.mantissa)"
        case .other(let type, _): "other \(type)"
        }
    }

    /// Both readers on `bytes`: the same packets or the same error.
    private static func agree(_ bytes: [UInt8]) -> Bool {
        let parsed: Result<[String], RTCPParseError>
        do throws(RTCPParseError) {
            let compound = try RTCPCompoundPacket.parse(bytes.span.bytes)
            parsed = .success(zip(compound.packets, compound.packetRanges).map { summary($0, range: $1) })
        } catch {
            parsed = .failure(error)
        }
        var seen: [String] = []
        let viewed: Result<[String], RTCPParseError> = bytes.withUnsafeBytes { raw in
            do throws(RTCPParseError) {
                try RTCPCompoundView.forEachPacket(raw) { seen.append(summary($0)) }
                return .success(seen)
            } catch {
                // Validation comes first: a rejected compound shows nothing.
                return seen.isEmpty ? .failure(error) : .success(["packets before the error"])
            }
        }
        return parsed == viewed
    }

    @Test func agreesWithTheParserOnEveryFuzzSeed() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("Fuzz/Corpus/rtcp")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        #expect(files.count >= 10)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            #expect(Self.agree(bytes), "\(file.lastPathComponent)")
        }
    }

    @Test func agreesOnBuiltCompoundsOfEveryInterpretedType() {
        let report = ReceptionReport(
            ssrc: SSRC(7), fractionLost: 12, cumulativeLost: -3, extendedHighestSequenceNumber: 70_000, jitter: 9,
            lastSenderReport: 5, delaySinceLastSenderReport: 6)
        let packets: [RTCPPacket] = [
            .senderReport(
                SenderReport(
                    ssrc: SSRC(1),
                    senderInfo: SenderInfo(ntpTimestamp: 0x1234_5678_9ABC_DEF0, rtpTimestamp: 3, packetCount: 4, octetCount: 5),
                    reports: [report, report])),
            .receiverReport(ReceiverReport(ssrc: SSRC(2), reports: [report])),
            .transportLayerNACK(
                TransportLayerNACK(
                    senderSSRC: SSRC(3), mediaSSRC: SSRC(4),
                    pairs: [NACKPair(packetID: 65535, lostPackets: 0x8001), NACKPair(packetID: 9)])),
            .pictureLossIndication(PictureLossIndication(senderSSRC: SSRC(5), mediaSSRC: SSRC(6))),
            .fullIntraRequest(
                FullIntraRequest(
                    senderSSRC: SSRC(7),
                    entries: [FIREntry(ssrc: SSRC(8), sequenceNumber: 200), FIREntry(ssrc: SSRC(9), sequenceNumber: 1)])),
            .receiverEstimatedMaximumBitrate(
                ReceiverEstimatedMaximumBitrate(
                    senderSSRC: SSRC(10), bitrate: Bitrate(bitsPerSecond: 1_500_000), ssrcs: [SSRC(11)])),
        ]
        let bytes = RTCPCompoundPacket.serialize(packets)
        #expect(Self.agree(bytes))
        var kinds: [String] = []
        bytes.withUnsafeBytes { raw in
            try? RTCPCompoundView.forEachPacket(raw) { kinds.append(String(Self.summary($0).split(separator: " ")[0])) }
        }
        #expect(kinds == ["SR", "RR", "NACK", "PLI", "FIR", "REMB"])
        // Every truncation and every single-byte change of it.
        for end in 0..<bytes.count { #expect(Self.agree(Array(bytes[0..<end]))) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var mutated = bytes
            mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            #expect(Self.agree(mutated))
        }
    }

    @Test func agreesOnRandomInput() {
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        for _ in 0..<5000 {
            let count = Int(next() % 64)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
            // Mostly well-formed headers, so the packet parsers are reached.
            if count >= 4 {
                bytes[0] = 0x80 | (bytes[0] & 0x1F)
                bytes[1] = [200, 201, 202, 203, 204, 205, 206][Int(next() % 7)]
                bytes[2] = 0
                bytes[3] = UInt8((count / 4) - 1)
            }
            #expect(Self.agree(bytes))
        }
    }
}
