import RTCP
import SFUTesting
import Testing
import Wire

@testable import RTPStreams

/// A peer's report compounds, parsed back with the RTCP target's parser:
/// SRs of the sending streams, RRs of the reporter with at most 31 blocks,
/// the SDES CNAME last, every compound within its size and packet bounds.
@Suite struct ReportCompoundBuilderTests {
    static let reporter = SSRC(0x5357_4C54)
    static let wall = NTPTimestamp(seconds: 3_900_000_000, fraction: 0x8000_0000)

    /// Runs one round into a `bufferSize` buffer; returns each compound's
    /// bytes and what `emit` said about it, and the summary.
    func round(
        _ builder: inout ReportCompoundBuilder, bufferSize: Int = 1500
    ) -> (compounds: [(bytes: [UInt8], compound: ReportCompound)], summary: ReportRoundSummary) {
        var buffer = [UInt8](repeating: 0xEE, count: bufferSize)
        var out: [(bytes: [UInt8], compound: ReportCompound)] = []
        let summary = buffer.withUnsafeMutableBytes { b in
            builder.write(into: b) { out.append((Array($0.bytes), $0)) }
        }
        return (out, summary)
    }

    func parse(_ bytes: [UInt8]) throws -> [RTCPPacket] {
        try RTCPCompoundPacket.parse(bytes.span.bytes).packets
    }

    /// A reception of `ssrc` that got `packets` of 100 sent (every
    /// other one lost after the first `packets`).
    func reception(_ ssrc: UInt32, packets: UInt16 = 10) -> ReceptionStatistics {
        var r = ReceptionStatistics(ssrc: SSRC(ssrc), clockRate: 90_000)
        for n in 0..<packets { r.record(sequenceNumber: 1000 &+ n * 2, timestamp: UInt32(n) * 3000, arrival: .zero) }
        return r
    }

    func sending(_ ssrc: UInt32) -> SendStatistics {
        var s = SendStatistics(ssrc: SSRC(ssrc), clockRate: 90_000)
        s.record(timestamp: 9000, payloadOctets: 1000, sentAt: .zero)
        return s
    }

    func cname(of packet: RTCPPacket?) -> (SSRC, String?)? {
        guard case .sourceDescription(let sdes)? = packet, sdes.chunks.count == 1 else { return nil }
        return (sdes.chunks[0].source, sdes.chunks[0].cname)
    }

    @Test func oneBlockAndCNAMEFieldByField() throws {
        var builder = ReportCompoundBuilder(reporterSSRC: Self.reporter, cname: "bot")
        builder.addReportBlock(
            ReceptionReport(
                ssrc: SSRC(0x0102_0304), fractionLost: 0x40, cumulativeLost: -2, extendedHighestSequenceNumber: 0x0001_0005,
                jitter: 7, lastSenderReport: 0xAABB_CCDD, delaySinceLastSenderReport: 0x0001_0000))
        let (compounds, summary) = round(&builder)
        #expect(compounds.count == 1)
        #expect(
            compounds.first?.bytes == [
                0x81, 201, 0x00, 0x07,  // V=2, RC=1, RR, 8 words
                0x53, 0x57, 0x4C, 0x54,  // reporter SSRC
                0x01, 0x02, 0x03, 0x04,  // SSRC_1
                0x40, 0xFF, 0xFF, 0xFE,  // fraction 1/4, cumulative lost -2 (24-bit)
                0x00, 0x01, 0x00, 0x05,  // extended highest sequence number
                0x00, 0x00, 0x00, 0x07,  // jitter
                0xAA, 0xBB, 0xCC, 0xDD,  // LSR
                0x00, 0x01, 0x00, 0x00,  // DLSR: 1 s
                0x81, 202, 0x00, 0x03,  // V=2, SC=1, SDES, 4 words
                0x53, 0x57, 0x4C, 0x54,  // chunk: reporter SSRC
                0x01, 0x03, 0x62, 0x6F, 0x74,  // CNAME, 3 bytes, "bot"
                0x00, 0x00, 0x00,  // terminating zero, padding to 32 bits
            ])
        var expected = ReportRoundSummary()
        (expected.compounds, expected.receiverReports, expected.reportBlocks) = (1, 1, 1)
        #expect(summary == expected)
        #expect(builder.isEmpty)
    }

    @Test func sameBytesAsTheRTCPSerializers() throws {
        var builder = ReportCompoundBuilder(reporterSSRC: Self.reporter, cname: "swiftlet")
        var receptions = [reception(11), reception(12, packets: 3)]
        let senders = [sending(21), sending(22)]
        var copies = receptions
        let blocks = copies.indices.compactMap { copies[$0].makeReportBlock(now: Instant.zero + .seconds(1)) }
        let infos = senders.compactMap { $0.makeSenderInfo(now: Instant.zero + .seconds(1), wallClock: Self.wall) }
        for s in senders { #expect(builder.addSenderReport(of: s, now: Instant.zero + .seconds(1), wallClock: Self.wall) != nil) }
        for i in receptions.indices { #expect(builder.addReportBlock(of: &receptions[i], now: Instant.zero + .seconds(1))) }
        let (compounds, summary) = round(&builder)
        let expected = RTCPCompoundPacket.serialize([
            .senderReport(SenderReport(ssrc: SSRC(21), senderInfo: infos[0])),
            .senderReport(SenderReport(ssrc: SSRC(22), senderInfo: infos[1])),
            .receiverReport(ReceiverReport(ssrc: Self.reporter, reports: blocks)),
            .sourceDescription(
                SourceDescription(chunks: [SDESChunk(source: Self.reporter, items: [SDESItem(type: .cname, text: "swiftlet")])])),
        ])
        #expect(compounds.map(\.bytes) == [expected])
        #expect(compounds.first?.compound.senderReports == 2)
        #expect(summary.senderReports == 2 && summary.receiverReports == 1 && summary.reportBlocks == 2)
        // The statistics started a new loss interval: the next block has
        // no fraction lost left over.
        #expect(receptions[0].makeReportBlock(now: Instant.zero + .seconds(2))?.fractionLost == 0)
    }

    @Test func nothingToReportWritesNothingAndStreamsThatHaveNotStartedAddNothing() {
        var builder = ReportCompoundBuilder(reporterSSRC: Self.reporter, cname: "x")
        var silent = ReceptionStatistics(ssrc: SSRC(1), clockRate: 48_000)
        #expect(!builder.addReportBlock(of: &silent, now: .zero))
        #expect(
            builder.addSenderReport(of: SendStatistics(ssrc: SSRC(2), clockRate: 48_000), now: .zero, wallClock: Self.wall) == nil
        )
        #expect(builder.isEmpty)
        let (compounds, summary) = round(&builder)
        #expect(compounds.isEmpty)
        #expect(summary == ReportRoundSummary())
    }

    @Test func moreThan31SourcesGoInFurtherReceiverReports() throws {
        var builder = ReportCompoundBuilder(reporterSSRC: Self.reporter, cname: "swiftlet")
        for n in 1...40 { builder.addReportBlock(ReceptionReport(ssrc: SSRC(UInt32(n)))) }
        let (compounds, _) = round(&builder)
        // 8 + 31 * 24 + 8 + 9 * 24 + 20 = 996 bytes: one compound, two RRs.
        #expect(compounds.count == 1)
        let packets = try parse(try #require(compounds.first).bytes)
        #expect(packets.count == 3)
        guard case .receiverReport(let first) = packets[0], case .receiverReport(let second) = packets[1] else {
            Issue.record("expected RR, RR: \(packets)")
            return
        }
        #expect(first.ssrc == Self.reporter && second.ssrc == Self.reporter)
        #expect(first.reports.map(\.ssrc.rawValue) == Array(1...31))
        #expect(second.reports.map(\.ssrc.rawValue) == Array(32...40))
        #expect(cname(of: packets.last)?.0 == Self.reporter)
        #expect(cname(of: packets.last)?.1 == "swiftlet")
    }

    @Test func aRoundLargerThanTheMTUIsSplitIntoCompleteCompounds() throws {
        var builder = ReportCompoundBuilder(reporterSSRC: Self.reporter, cname: "swiftlet")
        for n in 1...20 {
            builder.addSenderReport(
                ssrc: SSRC(UInt32(1000 + n)),
                senderInfo: SenderInfo(ntpTimestamp: 1, rtpTimestamp: 2, packetCount: 3, octetCount: 4))
        }
        for n in 1...100 { builder.addReportBlock(ReceptionReport(ssrc: SSRC(UInt32(n)), jitter: UInt32(n))) }
        let (compounds, summary) = round(&builder)
        #expect(compounds.count == 3)
        var senders: [UInt32] = []
        var blocks: [UInt32] = []
        for (bytes, compound) in compounds {
            #expect(bytes.count <= ReportCompoundBuilder.defaultMaximumCompoundSize)
            let packets = try parse(bytes)
            // RFC 3550 section 6.1: SR or RR first, SDES CNAME in each.
            switch packets.first {
            case .senderReport?, .receiverReport?: break
            default: Issue.record("compound starts with \(String(describing: packets.first))")
            }
            #expect(cname(of: packets.last)?.1 == "swiftlet")
            var rrs = 0
            for packet in packets {
                switch packet {
                case .senderReport(let sr):
                    #expect(sr.reports.isEmpty)
                    #expect(rrs == 0, "SRs come before the RRs")
                    senders.append(sr.ssrc.rawValue)
                case .receiverReport(let rr):
                    #expect(rr.ssrc == Self.reporter)
                    #expect(rr.reports.count <= 31)
                    rrs += 1
                    blocks += rr.reports.map(\.ssrc.rawValue)
                    #expect(rr.reports.allSatisfy { $0.jitter == $0.ssrc.rawValue })
                default: break
                }
            }
            #expect(compound.receiverReports == rrs)
        }
        #expect(senders == Array(1001...1020))
        #expect(blocks == Array(1...100))
        #expect(summary.compounds == 3 && summary.senderReports == 20 && summary.reportBlocks == 100)
        #expect(summary.unwritten == 0)
    }

    @Test func aHugeCompoundSizeStillKeepsToTheParsersPacketBound() throws {
        var builder = ReportCompoundBuilder(reporterSSRC: Self.reporter, cname: "swiftlet", maximumCompoundSize: 65_536)
        let info = SenderInfo(ntpTimestamp: 1, rtpTimestamp: 2, packetCount: 3, octetCount: 4)
        for n in 1...70 { builder.addSenderReport(ssrc: SSRC(UInt32(n)), senderInfo: info) }
        let (compounds, summary) = round(&builder, bufferSize: 65_536)
        // 63 SRs and the SDES, then 7 and the SDES.
        #expect(compounds.map(\.compound.senderReports) == [63, 7])
        for (bytes, _) in compounds { #expect(try parse(bytes).count <= RTCPCompoundPacket.maximumPackets) }
        #expect(summary.senderReports == 70)
    }

    @Test func aBufferTooSmallForOneReportWritesNothing() {
        var builder = ReportCompoundBuilder(reporterSSRC: Self.reporter, cname: "swiftlet")
        builder.addReportBlock(ReceptionReport(ssrc: SSRC(1)))
        builder.addSenderReport(
            ssrc: SSRC(2), senderInfo: SenderInfo(ntpTimestamp: 1, rtpTimestamp: 2, packetCount: 3, octetCount: 4))
        // RR + one block (32) and the SDES (20) need 52 bytes.
        let (compounds, summary) = round(&builder, bufferSize: 51)
        #expect(compounds.isEmpty)
        #expect(summary.unwritten == 2)
        #expect(builder.isEmpty)
        builder.addReportBlock(ReceptionReport(ssrc: SSRC(1)))
        #expect(round(&builder, bufferSize: 52).compounds.map(\.bytes.count) == [52])
    }

    @Test func aLongCNAMEIsCutTo255Bytes() throws {
        var builder = ReportCompoundBuilder(reporterSSRC: Self.reporter, cname: String(repeating: "c", count: 300))
        builder.addReportBlock(ReceptionReport(ssrc: SSRC(1)))
        let (compounds, _) = round(&builder)
        let packets = try parse(try #require(compounds.first).bytes)
        #expect(cname(of: packets.last)?.1 == String(repeating: "c", count: 255))
    }
}
