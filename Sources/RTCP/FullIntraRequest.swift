import Wire

/// One FIR FCI entry (RFC 5104 section 4.3.1.1): the SSRC of the media
/// sender asked for a decoder refresh, and a command sequence number that
/// increases by one for each new request (repeats keep it).
package struct FIREntry: Equatable, Sendable {
    package var ssrc: SSRC
    package var sequenceNumber: UInt8

    package init(ssrc: SSRC, sequenceNumber: UInt8) {
        self.ssrc = ssrc
        self.sequenceNumber = sequenceNumber
    }
}

/// FIR: PSFB (206) with FMT 4 (RFC 5104 section 4.3.1).
///
///     |V=2|P| FMT=4   |   PT=206      |          length               |
///     |                  SSRC of packet sender                        |
///     |             SSRC of media source (unused, 0)                  |
///     |                              SSRC                             |
///     | Seq nr.       |    Reserved                                   |
///     :                       (more entries)                          :
///
/// Entries are 8 bytes; a partial entry at the end is rejected.
package struct FullIntraRequest: Equatable, Sendable {
    package static let format: UInt8 = 4

    package var senderSSRC: SSRC
    /// RFC 5104 says to set this to 0; a received value is kept as is.
    package var mediaSSRC: SSRC
    package var entries: [FIREntry]

    package init(senderSSRC: SSRC, mediaSSRC: SSRC = SSRC(0), entries: [FIREntry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> FullIntraRequest {
        let sender = try reader.ssrc(or: .truncated)
        let media = try reader.ssrc(or: .truncated)
        guard reader.remaining % 8 == 0 else { throw .truncated }
        var entries: [FIREntry] = []
        entries.reserveCapacity(reader.remaining / 8)
        while !reader.isAtEnd {
            let ssrc = try reader.ssrc(or: .truncated)
            let seq = try reader.uint8(or: RTCPParseError.truncated)
            try reader.skip(3, or: RTCPParseError.truncated)
            entries.append(FIREntry(ssrc: ssrc, sequenceNumber: seq))
        }
        return FullIntraRequest(senderSSRC: sender, mediaSSRC: media, entries: entries)
    }

    package func serialize(into writer: inout ByteWriter) {
        writer.rtcpPacket(count: Self.format, packetType: RTCPPacketType.payloadFeedback) { w in
            w.uint32(senderSSRC.rawValue)
            w.uint32(mediaSSRC.rawValue)
            for entry in entries {
                w.uint32(entry.ssrc.rawValue)
                w.uint8(entry.sequenceNumber)
                w.zeros(3)
            }
        }
    }

    package func serialized() -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer)
        return writer.bytes
    }
}
