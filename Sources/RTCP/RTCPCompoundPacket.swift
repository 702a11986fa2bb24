import Wire

/// A compound RTCP packet: RTCP packets stacked back to back in one
/// datagram (RFC 3550 section 6.1).
///
/// Rules applied while parsing, in one pass:
/// - Every packet's version is 2 and its length field stays within the
///   buffer; a length that overruns is an error, never a read past the end.
/// - Only the last packet may set the padding bit; its padding count
///   (the last byte) is at least 1 and no larger than the packet's body.
/// - Reduced-size RTCP (RFC 5506) is accepted: the compound need not start
///   with SR or RR, so a lone PLI, NACK or TWCC feedback parses. The
///   RFC 3550 appendix A.2 "first packet is SR or RR" check is deliberately
///   not applied; callers that want it can look at `packets.first`.
/// - Unknown packet types and unknown feedback FMTs become
///   `RTCPPacket.unknown` with their type and range; they do not fail the
///   compound.
/// - Any malformed packet rejects the whole compound with a typed error.
///   SRTCP authenticates the compound as a unit, so there is no partial
///   trust to salvage, and callers get one clear outcome to count.
/// - At most `maximumPackets` packets per compound.
package struct RTCPCompoundPacket: Equatable, Sendable {
    /// A generous bound: a 1500-byte datagram of 4-byte packets would hold
    /// 375, but real compounds carry a handful.
    package static let maximumPackets = 64

    package var packets: [RTCPPacket]
    /// Where each packet (header through padding) lies in the parsed buffer,
    /// parallel to `packets`.
    package var packetRanges: [Range<Int>]

    package init(packets: [RTCPPacket], packetRanges: [Range<Int>]) {
        self.packets = packets
        self.packetRanges = packetRanges
    }

    package static func parse(_ bytes: RawSpan) throws(RTCPParseError) -> RTCPCompoundPacket {
        var packets: [RTCPPacket] = []
        var ranges: [Range<Int>] = []
        try walk(bytes) { header, range, contentEnd throws(RTCPParseError) in
            var packetReader = ByteReader(bytes.extracting(range.lowerBound..<contentEnd), offset: RTCPHeader.byteCount)
            packets.append(try RTCPPacket.parse(header, &packetReader))
            ranges.append(range)
        }
        return RTCPCompoundPacket(packets: packets, packetRanges: ranges)
    }

    /// The compound's structure, checked in one pass without allocating:
    /// calls `body` with each packet's header, its range (header through
    /// padding) and where its content ends (before padding). The rules
    /// above; `parse` and `RTCPCompoundView` both walk with it.
    static func walk(
        _ bytes: RawSpan, _ body: (RTCPHeader, Range<Int>, Int) throws(RTCPParseError) -> Void
    ) throws(RTCPParseError) {
        guard bytes.byteCount > 0 else { throw .emptyCompound }
        var reader = ByteReader(bytes)
        var count = 0
        while !reader.isAtEnd {
            guard count < maximumPackets else { throw .tooManyPackets }
            count += 1
            let start = reader.offset
            let header = try RTCPHeader.parse(&reader)
            let size = header.packetByteCount
            // The header is already consumed, so the rest of the packet is
            // size - 4 bytes.
            guard reader.canRead(size - RTCPHeader.byteCount) else { throw .lengthBeyondBuffer }
            let end = start + size
            var contentEnd = end
            if header.padding {
                guard end == bytes.byteCount else { throw .paddingNotInLastPacket }
                let padCount = Int(bytes.byte(at: end - 1))
                guard padCount >= 1, padCount <= size - RTCPHeader.byteCount else { throw .invalidPadding }
                contentEnd = end - padCount
            }
            try body(header, start..<end, contentEnd)
            try reader.skip(size - RTCPHeader.byteCount, or: RTCPParseError.lengthBeyondBuffer)
        }
    }

    /// Concatenates the packets' bytes (unknown packets contribute nothing).
    package static func serialize(_ packets: [RTCPPacket]) -> [UInt8] {
        var writer = ByteWriter(capacity: 256)
        for packet in packets { packet.serialize(into: &writer) }
        return writer.bytes
    }
}
