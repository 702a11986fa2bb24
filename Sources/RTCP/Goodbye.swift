import Wire

/// BYE: goodbye, packet type 203 (RFC 3550 section 6.6).
///
///     |V=2|P|    SC   |   PT=BYE=203  |             length            |
///     |                           SSRC/CSRC                           |
///     :                              ...                              :
///     |     length    |               reason for leaving            ...
///
/// The optional reason follows the SSRC list when bytes remain; its length
/// byte is checked against what is present.
package struct Goodbye: Equatable, Sendable {
    package static let maximumSources = 31

    package var sources: [SSRC]
    /// Reason bytes (UTF-8 text), at most 255; nil when absent.
    package var reason: [UInt8]?

    package init(sources: [SSRC], reason: [UInt8]? = nil) {
        self.sources = sources
        self.reason = reason
    }

    package init(sources: [SSRC], reasonText: String) {
        self.init(sources: sources, reason: Array(reasonText.utf8))
    }

    package var reasonText: String? { reason.map { String(decoding: $0, as: UTF8.self) } }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> Goodbye {
        guard reader.canRead(Int(header.count) * 4) else { throw .countBeyondPacket }
        var sources: [SSRC] = []
        sources.reserveCapacity(Int(header.count))
        for _ in 0..<header.count { sources.append(try reader.ssrc(or: .truncated)) }
        var reason: [UInt8]?
        if !reader.isAtEnd {
            let length = try reader.uint8(or: RTCPParseError.truncated)
            reason = try reader.bytesArray(Int(length), or: RTCPParseError.truncated)
        }
        return Goodbye(sources: sources, reason: reason)
    }

    /// Appends the packet. Only the first `maximumSources` SSRCs fit the
    /// 5-bit count; the reason is cut to 255 bytes.
    package func serialize(into writer: inout ByteWriter) {
        let selected = sources.prefix(Self.maximumSources)
        writer.rtcpPacket(count: UInt8(selected.count), packetType: RTCPPacketType.goodbye) { w in
            for s in selected { w.uint32(s.rawValue) }
            if let reason {
                let text = reason.prefix(255)
                w.uint8(UInt8(text.count))
                w.append(text)
            }
        }
    }

    package func serialized() -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer)
        return writer.bytes
    }
}
