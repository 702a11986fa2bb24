import Wire

/// The parsed header of one RTP packet (RFC 3550 section 5.1): field values
/// plus byte offsets into the packet, never a copy of its bytes.
///
/// Parsing reads the fixed header, checks that the CSRC list, the header
/// extension (section 5.3.1) and the padding fit in the packet, and walks
/// RFC 8285 extension elements once to make sure each lies inside the
/// block. Nothing is allocated: the CSRC list and the extension elements
/// stay in the packet and are read through accessors that take the same
/// bytes again (`csrc(at:in:)`, `extensionValueRange(id:in:)`).
///
///      0                   1                   2                   3
///      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |V=2|P|X|  CC   |M|     PT      |       sequence number         |
///     |                           timestamp                           |
///     |           synchronization source (SSRC) identifier            |
///     |            contributing source (CSRC) identifiers             |
///     |                             ....                              |
package struct RTPHeader: Equatable, Sendable {
    /// Size of the fixed header, before the CSRC list.
    package static let fixedHeaderLength = 12

    package var marker: Bool
    package var payloadType: PayloadType
    package var sequenceNumber: UInt16
    package var timestamp: UInt32
    package var ssrc: SSRC
    /// Number of CSRC identifiers (the CC field, 0...15); they start at
    /// byte 12.
    package var csrcCount: Int
    /// The P bit was set.
    package var hasPadding: Bool
    /// Bytes of padding at the end of the packet, count byte included; 0
    /// without the P bit.
    package var paddingLength: Int
    /// The header extension, when the X bit is set.
    package var headerExtension: RTPHeaderExtension?
    /// Offset of the payload: the end of the fixed header, CSRCs and
    /// extension.
    package var payloadOffset: Int
    /// Payload bytes, padding excluded.
    package var payloadLength: Int
    /// Bytes of the whole packet that was parsed.
    package var packetLength: Int

    /// The payload as a range of the packet's bytes.
    package var payloadRange: Range<Int> { payloadOffset..<payloadOffset + payloadLength }
    /// Header length: fixed header, CSRCs and extension.
    package var headerLength: Int { payloadOffset }

    package init(parsing bytes: RawSpan) throws(RTPParseError) {
        var reader = ByteReader(bytes)
        let first = try reader.uint8(or: RTPParseError.truncated)
        let version = first >> 6
        guard version == 2 else { throw .unsupportedVersion(version) }
        hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        csrcCount = Int(first & 0x0F)
        let second = try reader.uint8(or: RTPParseError.truncated)
        marker = second & 0x80 != 0
        payloadType = PayloadType(masking: second)
        sequenceNumber = try reader.uint16(or: RTPParseError.truncated)
        timestamp = try reader.uint32(or: RTPParseError.truncated)
        ssrc = SSRC(try reader.uint32(or: RTPParseError.truncated))
        try reader.skip(4 * csrcCount, or: RTPParseError.truncated)

        if hasExtension {
            let profile = try reader.uint16(or: RTPParseError.truncated)
            let words = Int(try reader.uint16(or: RTPParseError.truncated))
            let start = reader.offset
            try reader.skip(4 * words, or: RTPParseError.truncated)
            let ext = RTPHeaderExtension(profile: profile, dataRange: start..<start + 4 * words)
            try ext.validateElements(in: bytes)
            headerExtension = ext
        } else {
            headerExtension = nil
        }

        payloadOffset = reader.offset
        packetLength = bytes.byteCount
        let afterHeader = reader.remaining
        if hasPadding {
            // The last byte counts the padding, itself included, so it is at
            // least 1 and cannot reach back into the header.
            guard afterHeader > 0 else { throw .invalidPadding }
            let count = Int(bytes.byte(at: bytes.byteCount - 1))
            guard count >= 1, count <= afterHeader else { throw .invalidPadding }
            paddingLength = count
        } else {
            paddingLength = 0
        }
        payloadLength = afterHeader - paddingLength
    }

    /// The `index`th CSRC, read from the packet this header was parsed
    /// from; nil when out of range.
    package func csrc(at index: Int, in bytes: RawSpan) -> SSRC? {
        guard index >= 0, index < csrcCount else { return nil }
        let offset = Self.fixedHeaderLength + 4 * index
        guard offset + 4 <= bytes.byteCount else { return nil }
        var reader = ByteReader(bytes, offset: offset)
        guard let v = try? reader.uint32(or: RTPParseError.truncated) else { return nil }
        return SSRC(v)
    }

    /// The byte range of the value of RFC 8285 element `id`, or nil when
    /// the packet has no such element (or no RFC 8285 extension).
    package func extensionValueRange(id: UInt8, in bytes: RawSpan) -> Range<Int>? {
        headerExtension?.valueRange(id: id, in: bytes)
    }

    /// `true` when the second byte marks RTCP rather than RTP on an
    /// rtcp-mux port (RFC 5761 section 4): RTCP packet types 192...223
    /// occupy the byte where RTP has marker and payload type, so such
    /// values are never used as RTP payload types 64...95.
    package static func isRTCP(_ bytes: RawSpan) -> Bool {
        guard bytes.byteCount >= 2 else { return false }
        let type = bytes.byte(at: 1)
        return type >= 192 && type <= 223
    }
}
