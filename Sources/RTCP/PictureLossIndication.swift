import Wire

/// PLI: PSFB (206) with FMT 1 and no FCI (RFC 4585 section 6.3.1).
///
///     |V=2|P| FMT=1   |   PT=206      |          length=2             |
///     |                  SSRC of packet sender                        |
///     |                  SSRC of media source                         |
///
/// Bytes after the two SSRCs are ignored (the RFC defines no FCI).
package struct PictureLossIndication: Equatable, Sendable {
    package static let format: UInt8 = 1

    package var senderSSRC: SSRC
    package var mediaSSRC: SSRC

    package init(senderSSRC: SSRC, mediaSSRC: SSRC) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> PictureLossIndication {
        PictureLossIndication(senderSSRC: try reader.ssrc(or: .truncated), mediaSSRC: try reader.ssrc(or: .truncated))
    }

    package func serialize(into writer: inout ByteWriter) {
        writer.rtcpPacket(count: Self.format, packetType: RTCPPacketType.payloadFeedback) { w in
            w.uint32(senderSSRC.rawValue)
            w.uint32(mediaSSRC.rawValue)
        }
    }

    package func serialized() -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer)
        return writer.bytes
    }
}
