import Wire

/// RR: receiver report, packet type 201 (RFC 3550 section 6.4.2). The SR
/// layout without the sender info.
///
///     |V=2|P|    RC   |   PT=RR=201   |             length            |
///     |                     SSRC of packet sender                     |
///     |                 report blocks (RC x 24 bytes)                 |
///     |                  profile-specific extensions                  |
package struct ReceiverReport: Equatable, Sendable {
    package static let maximumReports = 31
    /// Header and sender SSRC: an RR without report blocks.
    package static let fixedByteCount = RTCPHeader.byteCount + 4

    package var ssrc: SSRC
    package var reports: [ReceptionReport]
    /// Profile-specific extension bytes, as offsets from the packet's first
    /// byte; empty when there are none.
    package var profileExtension: Range<Int>

    package init(ssrc: SSRC, reports: [ReceptionReport] = [], profileExtensionLength: Int = 0) {
        self.ssrc = ssrc
        self.reports = reports
        let start = RTCPHeader.byteCount + 4 + reports.count * ReceptionReport.byteCount
        profileExtension = ProfileExtension.range(start: start, length: profileExtensionLength)
    }

    init(ssrc: SSRC, reports: [ReceptionReport], profileExtension: Range<Int>) {
        self.ssrc = ssrc
        self.reports = reports
        self.profileExtension = profileExtension
    }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> ReceiverReport {
        let ssrc = try reader.ssrc(or: .truncated)
        let reports = try ReceptionReport.parseBlocks(count: header.count, &reader)
        return ReceiverReport(ssrc: ssrc, reports: reports, profileExtension: reader.offset..<reader.bytes.byteCount)
    }

    /// Appends the packet; see `SenderReport.serialize(into:profileExtension:)`.
    package func serialize(into writer: inout ByteWriter, profileExtension bytes: [UInt8] = []) {
        let blocks = reports.prefix(Self.maximumReports)
        writer.rtcpPacket(count: UInt8(blocks.count), packetType: RTCPPacketType.receiverReport) { w in
            w.uint32(ssrc.rawValue)
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
