import Wire

/// The sender information block of an SR (RFC 3550 section 6.4.1).
package struct SenderInfo: Equatable, Sendable {
    package static let byteCount = 20
    /// 64-bit NTP timestamp: seconds since 1900 in the high word, fraction
    /// in the low word.
    package var ntpTimestamp: UInt64
    package var rtpTimestamp: UInt32
    package var packetCount: UInt32
    package var octetCount: UInt32

    package init(ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32) {
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
    }

    /// The middle 32 bits of the NTP timestamp, echoed as LSR in reception
    /// reports (RFC 3550 section 6.4.1).
    package var compactNTP: UInt32 { UInt32(truncatingIfNeeded: ntpTimestamp >> 16) }

    /// Stores the 20 bytes at `offset`, in place; false, with nothing
    /// written, when they do not fit.
    @discardableResult
    package func store(in bytes: MutableBytes, at offset: Int) -> Bool {
        guard offset >= 0, bytes.count - offset >= Self.byteCount else { return false }
        bytes.store(UInt32(truncatingIfNeeded: ntpTimestamp >> 32), at: offset)
        bytes.store(UInt32(truncatingIfNeeded: ntpTimestamp), at: offset + 4)
        bytes.store(rtpTimestamp, at: offset + 8)
        bytes.store(packetCount, at: offset + 12)
        bytes.store(octetCount, at: offset + 16)
        return true
    }
}

/// SR: sender report, packet type 200 (RFC 3550 section 6.4.1).
///
///     |V=2|P|    RC   |   PT=SR=200   |             length            |
///     |                         SSRC of sender                        |
///     |                     sender info (20 bytes)                    |
///     |                 report blocks (RC x 24 bytes)                 |
///     |                  profile-specific extensions                  |
package struct SenderReport: Equatable, Sendable {
    package static let maximumReports = 31
    /// Header, sender SSRC and sender info: an SR without report blocks.
    package static let fixedByteCount = RTCPHeader.byteCount + 4 + SenderInfo.byteCount

    package var ssrc: SSRC
    package var senderInfo: SenderInfo
    package var reports: [ReceptionReport]
    /// Profile-specific extension bytes, as offsets from the packet's first
    /// byte; empty when there are none.
    package var profileExtension: Range<Int>

    /// `profileExtensionLength` reserves room for extension bytes given to
    /// `serialize(into:profileExtension:)`, rounded up to 32 bits.
    package init(
        ssrc: SSRC, senderInfo: SenderInfo, reports: [ReceptionReport] = [],
        profileExtensionLength: Int = 0
    ) {
        self.ssrc = ssrc
        self.senderInfo = senderInfo
        self.reports = reports
        let start = RTCPHeader.byteCount + 4 + SenderInfo.byteCount + reports.count * ReceptionReport.byteCount
        profileExtension = ProfileExtension.range(start: start, length: profileExtensionLength)
    }

    init(ssrc: SSRC, senderInfo: SenderInfo, reports: [ReceptionReport], profileExtension: Range<Int>) {
        self.ssrc = ssrc
        self.senderInfo = senderInfo
        self.reports = reports
        self.profileExtension = profileExtension
    }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> SenderReport {
        let ssrc = try reader.ssrc(or: .truncated)
        let info = SenderInfo(
            ntpTimestamp: try reader.uint64(or: RTCPParseError.truncated),
            rtpTimestamp: try reader.uint32(or: RTCPParseError.truncated),
            packetCount: try reader.uint32(or: RTCPParseError.truncated),
            octetCount: try reader.uint32(or: RTCPParseError.truncated))
        let reports = try ReceptionReport.parseBlocks(count: header.count, &reader)
        return SenderReport(
            ssrc: ssrc, senderInfo: info, reports: reports,
            profileExtension: reader.offset..<reader.bytes.byteCount)
    }

    /// Appends the packet. Only the first `maximumReports` reports fit the
    /// 5-bit count; callers split larger sets over several packets.
    /// `profileExtension` supplies the bytes for the extension range, cut
    /// or zero-filled to its length.
    package func serialize(into writer: inout ByteWriter, profileExtension bytes: [UInt8] = []) {
        let blocks = reports.prefix(Self.maximumReports)
        writer.rtcpPacket(count: UInt8(blocks.count), packetType: RTCPPacketType.senderReport) { w in
            w.uint32(ssrc.rawValue)
            w.append(byteCount: SenderInfo.byteCount) { senderInfo.store(in: $0, at: 0) }
            for block in blocks { block.serialize(into: &w) }
            ProfileExtension.write(bytes, range: profileExtension, into: &w)
        }
    }

    package func serialized(profileExtension bytes: [UInt8] = []) -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer, profileExtension: bytes)
        return writer.bytes
    }
}
