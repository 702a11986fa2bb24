import Wire

/// APP: application-defined, packet type 204 (RFC 3550 section 6.7).
///
///     |V=2|P| subtype |   PT=APP=204  |             length            |
///     |                           SSRC/CSRC                           |
///     |                          name (ASCII)                         |
///     |                   application-dependent data                ...
package struct ApplicationDefined: Equatable, Sendable {
    /// 5 bits.
    package var subtype: UInt8
    package var ssrc: SSRC
    /// Four ASCII characters, big-endian in one word.
    package var name: UInt32
    /// Data bytes; a multiple of 4 long on the wire (serializing pads with
    /// zeros).
    package var data: [UInt8]

    package init(subtype: UInt8, ssrc: SSRC, name: UInt32, data: [UInt8]) {
        self.subtype = subtype & 0x1F
        self.ssrc = ssrc
        self.name = name
        self.data = data
    }

    /// `name` from a four-character ASCII string; nil for other lengths.
    package init?(subtype: UInt8, ssrc: SSRC, name: String, data: [UInt8]) {
        let bytes = Array(name.utf8)
        guard bytes.count == 4 else { return nil }
        let word = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        self.init(subtype: subtype, ssrc: ssrc, name: word, data: data)
    }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> ApplicationDefined {
        let ssrc = try reader.ssrc(or: .truncated)
        let name = try reader.uint32(or: RTCPParseError.truncated)
        let data = try reader.bytesArray(reader.remaining, or: RTCPParseError.truncated)
        return ApplicationDefined(subtype: header.count, ssrc: ssrc, name: name, data: data)
    }

    package func serialize(into writer: inout ByteWriter) {
        writer.rtcpPacket(count: subtype, packetType: RTCPPacketType.applicationDefined) { w in
            w.uint32(ssrc.rawValue)
            w.uint32(name)
            w.append(data)
        }
    }

    package func serialized() -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer)
        return writer.bytes
    }
}
