import Wire

/// A reception report block, carried by SR and RR (RFC 3550 section 6.4.1):
///
///     |                 SSRC_n (SSRC of source)                       |
///     | fraction lost |       cumulative number of packets lost       |
///     |           extended highest sequence number received           |
///     |                      interarrival jitter                      |
///     |                         last SR (LSR)                         |
///     |                   delay since last SR (DLSR)                  |
package struct ReceptionReport: Equatable, Sendable {
    package static let byteCount = 24
    /// The 24-bit signed range of the cumulative-lost field.
    package static let cumulativeLostRange: ClosedRange<Int32> = -(1 << 23)...(1 << 23) - 1

    package var ssrc: SSRC
    /// Fraction of packets lost since the last report, as a fixed-point
    /// number with the binary point at the left edge (lost/expected * 256).
    package var fractionLost: UInt8
    /// Packets lost since reception began: a 24-bit signed value, negative
    /// when duplicates outnumber losses. Serializing clamps to
    /// `cumulativeLostRange` (RFC 3550 appendix A.3).
    package var cumulativeLost: Int32
    package var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter in RTP timestamp units.
    package var jitter: UInt32
    /// Middle 32 bits of the NTP timestamp of the last SR received, or 0.
    package var lastSenderReport: UInt32
    /// Delay since that SR, in units of 1/65536 seconds, or 0.
    package var delaySinceLastSenderReport: UInt32

    package init(
        ssrc: SSRC, fractionLost: UInt8 = 0, cumulativeLost: Int32 = 0,
        extendedHighestSequenceNumber: UInt32 = 0, jitter: UInt32 = 0,
        lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// DLSR as a duration (1/65536 s units).
    package var delaySinceLastSenderReportDuration: Duration {
        .nanoseconds(Int64(delaySinceLastSenderReport) * 1_000_000_000 / 65536)
    }

    static func parse(_ reader: inout ByteReader) throws(RTCPParseError) -> ReceptionReport {
        let ssrc = try reader.ssrc(or: .truncated)
        let fraction = try reader.uint8(or: RTCPParseError.truncated)
        let lost24 = try reader.uint24(or: RTCPParseError.truncated)
        // Sign-extend 24 bits: shift the field to the top of an Int32 and back.
        let lost = Int32(bitPattern: lost24 << 8) >> 8
        return ReceptionReport(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: lost,
            extendedHighestSequenceNumber: try reader.uint32(or: RTCPParseError.truncated),
            jitter: try reader.uint32(or: RTCPParseError.truncated),
            lastSenderReport: try reader.uint32(or: RTCPParseError.truncated),
            delaySinceLastSenderReport: try reader.uint32(or: RTCPParseError.truncated))
    }

    /// Reads `count` report blocks, first checking that the packet holds them.
    static func parseBlocks(count: UInt8, _ reader: inout ByteReader) throws(RTCPParseError) -> [ReceptionReport] {
        guard reader.canRead(Int(count) * byteCount) else { throw .countBeyondPacket }
        var reports: [ReceptionReport] = []
        reports.reserveCapacity(Int(count))
        for _ in 0..<count { reports.append(try parse(&reader)) }
        return reports
    }

    func serialize(into writer: inout ByteWriter) {
        writer.append(byteCount: Self.byteCount) { store(in: $0, at: 0) }
    }

    /// Stores the 24-byte block at `offset` (the layout above), in place;
    /// false, with nothing written, when it does not fit.
    @discardableResult
    package func store(in bytes: MutableBytes, at offset: Int) -> Bool {
        guard offset >= 0, bytes.count - offset >= Self.byteCount else { return false }
        let clamped = min(max(cumulativeLost, Self.cumulativeLostRange.lowerBound), Self.cumulativeLostRange.upperBound)
        bytes.store(ssrc.rawValue, at: offset)
        bytes.store(UInt32(fractionLost) << 24 | UInt32(bitPattern: clamped) & 0xFF_FFFF, at: offset + 4)
        bytes.store(extendedHighestSequenceNumber, at: offset + 8)
        bytes.store(jitter, at: offset + 12)
        bytes.store(lastSenderReport, at: offset + 16)
        bytes.store(delaySinceLastSenderReport, at: offset + 20)
        return true
    }
}

/// Profile-specific extension bytes after the report blocks of an SR or RR
/// (RFC 3550 section 6.4.1): kept as a range, not interpreted. Builders take
/// the bytes separately because a range alone has nothing to copy.
enum ProfileExtension {
    /// The range an extension of `length` bytes (rounded up to 32 bits)
    /// occupies when it starts at `start`.
    static func range(start: Int, length: Int) -> Range<Int> {
        let rounded = (max(length, 0) + 3) / 4 * 4
        return start..<start + rounded
    }

    /// Writes exactly `range.count` bytes: `bytes` cut or zero-filled to fit.
    static func write(_ bytes: [UInt8], range: Range<Int>, into writer: inout ByteWriter) {
        let n = range.count
        writer.append(bytes.prefix(n))
        if bytes.count < n { writer.zeros(n - bytes.count) }
    }
}
