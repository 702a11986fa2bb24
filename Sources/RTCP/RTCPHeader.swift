import Wire

/// The common header that starts every RTCP packet (RFC 3550 section 6.4.1):
///
///      0                   1                   2                   3
///      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |V=2|P| count   |      PT       |             length            |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///
/// `count` is the report/source count for SR, RR, SDES and BYE, the
/// subtype for APP and the feedback message type (FMT) for RTPFB and PSFB
/// (RFC 4585 section 6.1). `length` is the packet's size in 32-bit words
/// minus one, header included.
package struct RTCPHeader: Equatable, Sendable {
    package var padding: Bool
    /// 5 bits: RC, SC, subtype or FMT depending on the packet type.
    package var count: UInt8
    package var packetType: UInt8
    /// The length field: words minus one.
    package var length: UInt16

    package init(padding: Bool = false, count: UInt8, packetType: UInt8, length: UInt16) {
        self.padding = padding
        self.count = count & 0x1F
        self.packetType = packetType
        self.length = length
    }

    /// Size of the whole packet in bytes, header and padding included.
    package var packetByteCount: Int { (Int(length) + 1) * 4 }

    package static let byteCount = 4

    /// Stores the 4 header bytes at `offset`, in place (version 2); false,
    /// with nothing written, when they do not fit.
    @discardableResult
    package func store(in bytes: MutableBytes, at offset: Int) -> Bool {
        guard offset >= 0, bytes.count - offset >= Self.byteCount else { return false }
        bytes.store(0x80 | (padding ? 0x20 : 0) | count & 0x1F, at: offset)
        bytes.store(packetType, at: offset + 1)
        bytes.store(length, at: offset + 2)
        return true
    }

    /// Reads the 4 header bytes. Checks the version only; the caller checks
    /// the length against the bytes present.
    @inline(__always)
    static func parse(_ reader: inout ByteReader) throws(RTCPParseError) -> RTCPHeader {
        let first = try reader.uint8(or: RTCPParseError.truncatedHeader)
        guard first >> 6 == 2 else { throw .unsupportedVersion }
        let packetType = try reader.uint8(or: RTCPParseError.truncatedHeader)
        let length = try reader.uint16(or: RTCPParseError.truncatedHeader)
        return RTCPHeader(padding: first & 0x20 != 0, count: first & 0x1F, packetType: packetType, length: length)
    }
}

/// Packet type values (RFC 3550 section 12.1, RFC 4585 section 6.1).
package enum RTCPPacketType {
    package static let senderReport: UInt8 = 200
    package static let receiverReport: UInt8 = 201
    package static let sourceDescription: UInt8 = 202
    package static let goodbye: UInt8 = 203
    package static let applicationDefined: UInt8 = 204
    /// Transport-layer feedback (RTPFB).
    package static let transportFeedback: UInt8 = 205
    /// Payload-specific feedback (PSFB).
    package static let payloadFeedback: UInt8 = 206
}

extension ByteWriter {
    /// Writes one RTCP packet: a header with a placeholder length, the body
    /// from `body`, zero padding of the body to 32 bits, then the length.
    /// Builders never set the padding bit; padding a compound for SRTCP
    /// block alignment is the sender's business.
    mutating func rtcpPacket(count: UInt8, packetType: UInt8, _ body: (inout ByteWriter) -> Void) {
        let start = self.count
        append(byteCount: RTCPHeader.byteCount) {
            RTCPHeader(count: count, packetType: packetType, length: 0).store(in: $0, at: 0)
        }
        body(&self)
        pad(to: 4)
        // A body longer than the 16-bit length field can describe only comes
        // from a caller building an impossible packet; the field wraps rather
        // than trapping.
        let words = (self.count - start) / 4 - 1
        set(uint16: UInt16(truncatingIfNeeded: words), at: start + 2)
    }
}
