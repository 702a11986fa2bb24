import RTCP
import Wire

/// One compound of a report round, written at the start of the buffer
/// given to `ReportCompoundBuilder.write(into:emit:)`: valid only during
/// the `emit` call (the next compound overwrites it).
package struct ReportCompound {
    package var bytes: UnsafeRawBufferPointer
    package var senderReports: Int
    package var receiverReports: Int
    package var reportBlocks: Int
}

/// What one `write(into:emit:)` wrote.
package struct ReportRoundSummary: Equatable, Sendable {
    package var compounds = 0
    package var senderReports = 0
    package var receiverReports = 0
    package var reportBlocks = 0
    /// SRs and report blocks left out: the buffer cannot hold one of them
    /// with the SDES.
    package var unwritten = 0

    package init() {}
}

/// The RTCP reports of one peer leg (RFC 3550 section 6.4), assembled once
/// for the server's transports and roombot's bots.
///
/// A round: add an SR entry per outgoing SSRC that has sent (from its
/// `SendStatistics`) and a report block per incoming SSRC that has been
/// received (from its `ReceptionStatistics`), then `write` the compounds
/// into a buffer. Each compound is:
///
///     SR(ssrc_1) ... SR(ssrc_k)   one per sending stream, no blocks
///     RR(reporter) ...            the blocks, at most 31 per RR (6.4.2)
///     SDES(reporter CNAME)        every compound carries it (6.1, 6.5.1)
///
/// The report blocks go in RRs of the reporter SSRC, which never sends
/// media: an SFU leg or a bot receives under one SSRC of its own and sends
/// under its streams', so the receiver is a non-sender (section 6.4.2)
/// and each SR speaks for its stream alone. Every compound starts with an
/// SR or RR (section 6.1). A round that does not fit one compound of
/// `maximumCompoundSize` bytes (nor 64 packets, what `RTCPCompoundPacket`
/// parses) is split into several, each complete; section 6.4.1 puts more
/// than 31 sources in further RRs, and the MTU bounds a datagram.
///
/// Sans-IO and allocation-free in steady state: entries live in arrays
/// whose capacity is kept between rounds; the compound is stored in place
/// into the caller's buffer (which the caller may protect in place in
/// `emit`). A round with nothing to report writes nothing.
package struct ReportCompoundBuilder: Sendable {
    /// A 1200-byte datagram, as DTLS uses, less the largest SRTCP trailer:
    /// E flag and index (4 bytes, RFC 3711 section 3.4) and a 16-byte
    /// AES-GCM tag (RFC 7714 section 9).
    package static let defaultMaximumCompoundSize = 1200 - 20

    package let reporterSSRC: SSRC
    package let maximumCompoundSize: Int
    /// UTF-8, at most 255 bytes (the item's length is 8 bits).
    private let cname: [UInt8]
    private var senders: [(ssrc: SSRC, info: SenderInfo)] = []
    private var blocks: [ReceptionReport] = []

    package init(reporterSSRC: SSRC, cname: String, maximumCompoundSize: Int = defaultMaximumCompoundSize) {
        self.reporterSSRC = reporterSSRC
        self.cname = Array(cname.utf8.prefix(255))
        self.maximumCompoundSize = maximumCompoundSize
    }

    /// Nothing added since the last `write`.
    package var isEmpty: Bool { senders.isEmpty && blocks.isEmpty }

    package mutating func addSenderReport(ssrc: SSRC, senderInfo: SenderInfo) {
        senders.append((ssrc, senderInfo))
    }

    /// An SR for `stats`'s SSRC at `now` (wall clock `wallClock`); returns
    /// its sender info (the caller may remember its NTP time for the RTT
    /// of the blocks that echo it), nil when the stream has not sent.
    @discardableResult
    package mutating func addSenderReport(of stats: SendStatistics, now: Instant, wallClock: NTPTimestamp) -> SenderInfo? {
        guard let info = stats.makeSenderInfo(now: now, wallClock: wallClock) else { return nil }
        senders.append((stats.ssrc, info))
        return info
    }

    package mutating func addReportBlock(_ block: ReceptionReport) {
        blocks.append(block)
    }

    /// The report block of `stats` at `now`, which starts its next loss
    /// interval (add it only to a round that is written); false before
    /// the stream's first packet.
    @discardableResult
    package mutating func addReportBlock(of stats: inout ReceptionStatistics, now: Instant) -> Bool {
        guard let block = stats.makeReportBlock(now: now) else { return false }
        blocks.append(block)
        return true
    }

    /// Writes the round's compounds one after the other at the start of
    /// `buffer` (at most `maximumCompoundSize` bytes each) and calls `emit`
    /// with each; then forgets the round's entries.
    @discardableResult
    package mutating func write(
        into buffer: UnsafeMutableRawBufferPointer, emit: (ReportCompound) -> Void
    )
        -> ReportRoundSummary
    {
        defer {
            senders.removeAll(keepingCapacity: true)
            blocks.removeAll(keepingCapacity: true)
        }
        var summary = ReportRoundSummary()
        let sdes = SourceDescription.cnameByteCount(cnameLength: cname.count)
        let smallest = max(SenderReport.fixedByteCount, ReceiverReport.fixedByteCount + ReceptionReport.byteCount)
        var compound = Compound(bytes: MutableBytes(buffer), limit: min(buffer.count, maximumCompoundSize) - sdes)
        guard compound.limit >= smallest else {
            summary.unwritten = senders.count + blocks.count
            return summary
        }
        for sender in senders {
            if !compound.fits(SenderReport.fixedByteCount, packets: 1) { finish(&compound, &summary, emit) }
            compound.storeSenderReport(ssrc: sender.ssrc, info: sender.info)
        }
        for block in blocks {
            if !compound.fitsBlock { finish(&compound, &summary, emit) }
            compound.storeBlock(block, reporter: reporterSSRC)
        }
        if compound.offset > 0 { finish(&compound, &summary, emit) }
        return summary
    }

    /// Closes `compound` with the SDES, hands it out and starts the next.
    private func finish(_ compound: inout Compound, _ summary: inout ReportRoundSummary, _ emit: (ReportCompound) -> Void) {
        compound.closeReceiverReport()
        let written = cname.withUnsafeBytes {
            SourceDescription.storeCNAME($0, source: reporterSSRC, in: compound.bytes, at: compound.offset)
        }
        // `limit` keeps room for the SDES, so this always fits.
        let length = compound.offset + (written ?? 0)
        summary.compounds += 1
        summary.senderReports += compound.senderReports
        summary.receiverReports += compound.receiverReports
        summary.reportBlocks += compound.reportBlocks
        emit(
            ReportCompound(
                bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(compound.bytes.base)[0..<length]),
                senderReports: compound.senderReports, receiverReports: compound.receiverReports,
                reportBlocks: compound.reportBlocks))
        compound = Compound(bytes: compound.bytes, limit: compound.limit)
    }
}

/// One compound being stored: where the next packet goes, and the RR
/// still open for blocks.
private struct Compound {
    let bytes: MutableBytes
    /// Bytes the SRs and RRs may use: the compound's size less the SDES.
    let limit: Int
    var offset = 0
    /// Packets so far, the SDES not counted.
    var packets = 0
    var senderReports = 0
    var receiverReports = 0
    var reportBlocks = 0
    /// The open RR: where it starts and its blocks so far.
    var openReceiverReport: (start: Int, count: Int)?

    init(bytes: MutableBytes, limit: Int) {
        self.bytes = bytes
        self.limit = limit
    }

    /// Whether `size` more bytes in `packets` more packets fit, with the
    /// SDES after them within `RTCPCompoundPacket.maximumPackets`.
    func fits(_ size: Int, packets more: Int) -> Bool {
        offset + size <= limit && packets + more + 1 <= RTCPCompoundPacket.maximumPackets
    }

    /// Whether one more block fits: in the open RR, or in a new one.
    var fitsBlock: Bool {
        if let rr = openReceiverReport, rr.count < ReceiverReport.maximumReports {
            return fits(ReceptionReport.byteCount, packets: 0)
        }
        return fits(ReceiverReport.fixedByteCount + ReceptionReport.byteCount, packets: 1)
    }

    mutating func storeSenderReport(ssrc: SSRC, info: SenderInfo) {
        closeReceiverReport()
        RTCPHeader(count: 0, packetType: RTCPPacketType.senderReport, length: UInt16(SenderReport.fixedByteCount / 4 - 1))
            .store(in: bytes, at: offset)
        bytes.store(ssrc.rawValue, at: offset + 4)
        info.store(in: bytes, at: offset + 8)
        offset += SenderReport.fixedByteCount
        packets += 1
        senderReports += 1
    }

    mutating func storeBlock(_ block: ReceptionReport, reporter: SSRC) {
        if let rr = openReceiverReport, rr.count >= ReceiverReport.maximumReports { closeReceiverReport() }
        if openReceiverReport == nil {
            // The header is stored when the RR closes and its count is known.
            bytes.store(reporter.rawValue, at: offset + 4)
            openReceiverReport = (offset, 0)
            offset += ReceiverReport.fixedByteCount
            packets += 1
            receiverReports += 1
        }
        block.store(in: bytes, at: offset)
        offset += ReceptionReport.byteCount
        openReceiverReport?.count += 1
        reportBlocks += 1
    }

    mutating func closeReceiverReport() {
        guard let rr = openReceiverReport else { return }
        let size = ReceiverReport.fixedByteCount + rr.count * ReceptionReport.byteCount
        RTCPHeader(count: UInt8(rr.count), packetType: RTCPPacketType.receiverReport, length: UInt16(size / 4 - 1))
            .store(in: bytes, at: rr.start)
        openReceiverReport = nil
    }
}
