import Wire

/// The sender information block of an SR (RFC 3550 section 6.4.1).
public struct SenderInfo: Equatable, Sendable {
    public static let byteCount = 20
    /// 64-bit NTP timestamp: seconds since 1900 in the high word, fraction
    /// in the low word.
    public var ntpTimestamp: UInt64
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32

    public init(ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32) {
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
    }

    /// The middle 32 bits of the NTP timestamp, echoed as LSR in reception
    /// reports (RFC 3550 section 6.4.1).
    public var compactNTP: UInt32 { UInt32(truncatingIfNeeded: ntpTimestamp >> 16) }
}

/// SR: sender report, packet type 200 (RFC 3550 section 6.4.1).
///
///     |V=2|P|    RC   |   PT=SR=200   |             length            |
///     |                         SSRC of sender                        |
///     |                     sender info (20 bytes)                    |
///     |                 report blocks (RC x 24 bytes)                 |
///     |                  profile-specific extensions                  |
public struct SenderReport: Equatable, Sendable {
    public static let maximumReports = 31

    public var ssrc: SSRC
    public var senderInfo: SenderInfo
    public var reports: [ReceptionReport]
    /// Profile-specific extension bytes, as offsets from the packet's first
    /// byte; empty when there are none.
    public var profileExtension: Range<Int>

    /// `profileExtensionLength` reserves room for extension bytes given to
    /// `serialize(into:profileExtension:)`, rounded up to 32 bits.
    public init(
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
    public func serialize(into writer: inout ByteWriter, profileExtension bytes: [UInt8] = []) {
        let blocks = reports.prefix(Self.maximumReports)
        writer.rtcpPacket(count: UInt8(blocks.count), packetType: RTCPPacketType.senderReport) { w in
            w.uint32(ssrc.rawValue)
            w.uint64(senderInfo.ntpTimestamp)
            w.uint32(senderInfo.rtpTimestamp)
            w.uint32(senderInfo.packetCount)
            w.uint32(senderInfo.octetCount)
            for block in blocks { block.serialize(into: &w) }
            ProfileExtension.write(bytes, range: profileExtension, into: &w)
        }
    }

    public func serialized(profileExtension bytes: [UInt8] = []) -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer, profileExtension: bytes)
        return writer.bytes
    }
}
