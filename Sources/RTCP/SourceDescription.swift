import Wire

/// SDES item types (RFC 3550 section 6.5, section 12.2).
package struct SDESItemType: RawRepresentable, Hashable, Sendable {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Ends a chunk's item list; never a real item.
    package static let end = SDESItemType(rawValue: 0)
    package static let cname = SDESItemType(rawValue: 1)
    package static let name = SDESItemType(rawValue: 2)
    package static let email = SDESItemType(rawValue: 3)
    package static let phone = SDESItemType(rawValue: 4)
    package static let location = SDESItemType(rawValue: 5)
    package static let tool = SDESItemType(rawValue: 6)
    package static let note = SDESItemType(rawValue: 7)
    /// PRIV: the value starts with its own prefix length and prefix; kept raw.
    package static let priv = SDESItemType(rawValue: 8)
}

/// One SDES item: type, 8-bit length, value (RFC 3550 section 6.5).
package struct SDESItem: Equatable, Sendable {
    package var type: SDESItemType
    /// Raw value bytes (UTF-8 text for the standard items), at most 255.
    package var value: [UInt8]

    package init(type: SDESItemType, value: [UInt8]) {
        self.type = type
        self.value = value
    }

    package init(type: SDESItemType, text: String) {
        self.init(type: type, value: Array(text.utf8))
    }

    package var text: String { String(decoding: value, as: UTF8.self) }
}

/// One SDES chunk: an SSRC/CSRC and its items.
package struct SDESChunk: Equatable, Sendable {
    package var source: SSRC
    package var items: [SDESItem]

    package init(source: SSRC, items: [SDESItem]) {
        self.source = source
        self.items = items
    }

    /// The first CNAME item's text, if any.
    package var cname: String? { items.first { $0.type == .cname }?.text }
}

/// SDES: source description, packet type 202 (RFC 3550 section 6.5).
///
///     |V=2|P|    SC   |  PT=SDES=202  |             length            |
///     |                          SSRC/CSRC_1                          |
///     |                           SDES items                          |
///     |                              ...                              |
///
/// Each chunk's item list ends with at least one zero byte and is padded
/// with zeros to the next 32-bit boundary. Item lengths are checked against
/// the bytes present; a chunk whose item list reaches the end of the packet
/// without its terminating zero is rejected.
package struct SourceDescription: Equatable, Sendable {
    package static let maximumChunks = 31
    /// Items allowed per packet, over all chunks. Real senders send one or
    /// two (CNAME, sometimes MID); the bound keeps a hostile packet of tiny
    /// items from costing thousands of allocations.
    package static let maximumItems = 64

    package var chunks: [SDESChunk]

    package init(chunks: [SDESChunk]) { self.chunks = chunks }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> SourceDescription {
        var builder = ChunkBuilder()
        builder.chunks.reserveCapacity(Int(header.count))
        try walk(header, &reader, into: &builder)
        return SourceDescription(chunks: builder.chunks)
    }

    /// The checks of `parse` without building anything: what the router's
    /// in-place view runs on every SDES a browser sends (one per RTCP
    /// compound, RFC 3550 section 6.1), so it must not allocate.
    static func validate(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) {
        var counter = ItemCounter()
        try walk(header, &reader, into: &counter)
    }

    /// Walks the chunks and their items with every check, handing each to
    /// `sink`; one walk for `parse` and `validate`.
    private static func walk<Sink: SDESWalkSink>(
        _ header: RTCPHeader, _ reader: inout ByteReader, into sink: inout Sink
    ) throws(RTCPParseError) {
        // Each chunk takes at least 8 bytes (SSRC, then the terminator padded
        // to 32 bits).
        guard reader.canRead(Int(header.count) * 8) else { throw .countBeyondPacket }
        var itemCount = 0
        for _ in 0..<header.count {
            sink.startChunk(try reader.ssrc(or: .truncated))
            while true {
                let type = try reader.uint8(or: RTCPParseError.truncated)
                if type == 0 { break }
                itemCount += 1
                guard itemCount <= maximumItems else { throw .tooManyItems }
                let length = try reader.uint8(or: RTCPParseError.truncated)
                try sink.item(type: type, length: Int(length), from: &reader)
            }
            // Skip the rest of the terminator's 32-bit word. Chunks start on
            // 32-bit boundaries, as offsets from the packet start are.
            let misalignment = reader.offset % 4
            if misalignment != 0 { try reader.skip(4 - misalignment, or: RTCPParseError.truncated) }
        }
        sink.finish()
    }

    /// Appends the packet. Only the first `maximumChunks` chunks fit the
    /// 5-bit count, and item values are cut to 255 bytes.
    package func serialize(into writer: inout ByteWriter) {
        let selected = chunks.prefix(Self.maximumChunks)
        writer.rtcpPacket(count: UInt8(selected.count), packetType: RTCPPacketType.sourceDescription) { w in
            for chunk in selected {
                w.uint32(chunk.source.rawValue)
                for item in chunk.items where item.type != .end {
                    let value = item.value.prefix(255)
                    w.uint8(item.type.rawValue)
                    w.uint8(UInt8(value.count))
                    w.append(value)
                }
                // At least one terminating zero, then pad to 32 bits.
                w.uint8(0)
                w.pad(to: 4)
            }
        }
    }

    package func serialized() -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer)
        return writer.bytes
    }

    /// Size of the SDES packet `storeCNAME` writes for a CNAME of
    /// `cnameLength` bytes (cut to 255): header, SSRC, the item, the
    /// terminating zero, padding to 32 bits.
    package static func cnameByteCount(cnameLength: Int) -> Int {
        RTCPHeader.byteCount + 4 + (2 + min(max(cnameLength, 0), 255) + 1 + 3) / 4 * 4
    }

    /// Stores, in place at `offset`, the SDES packet every report compound
    /// ends with (RFC 3550 section 6.1): one chunk, `source` with its CNAME
    /// item (section 6.5.1), cut to 255 bytes. The same layout as
    /// `serialize(into:)` of that one chunk. Returns the bytes written, or
    /// nil (nothing written) when they do not fit.
    package static func storeCNAME(
        _ cname: UnsafeRawBufferPointer, source: SSRC, in bytes: MutableBytes, at offset: Int
    ) -> Int? {
        let value = UnsafeRawBufferPointer(rebasing: cname.prefix(255))
        let size = cnameByteCount(cnameLength: value.count)
        guard offset >= 0, bytes.count - offset >= size else { return nil }
        RTCPHeader(count: 1, packetType: RTCPPacketType.sourceDescription, length: UInt16(size / 4 - 1))
            .store(in: bytes, at: offset)
        bytes.store(source.rawValue, at: offset + 4)
        bytes.store(SDESItemType.cname.rawValue, at: offset + 8)
        bytes.store(UInt8(value.count), at: offset + 9)
        for (i, byte) in value.enumerated() { bytes.store(byte, at: offset + 10 + i) }
        // The terminating zero and the padding after it.
        for i in (offset + 10 + value.count)..<(offset + size) { bytes.store(UInt8(0), at: i) }
        return size
    }
}

/// What `SourceDescription.walk` hands its chunks and items to.
private protocol SDESWalkSink {
    mutating func startChunk(_ source: SSRC)
    /// Reads (or skips) exactly `length` bytes of the item's value.
    mutating func item(type: UInt8, length: Int, from reader: inout ByteReader) throws(RTCPParseError)
    mutating func finish()
}

/// Builds the chunks (`parse`).
private struct ChunkBuilder: SDESWalkSink {
    var chunks: [SDESChunk] = []
    private var source: SSRC?
    private var items: [SDESItem] = []

    mutating func startChunk(_ source: SSRC) {
        finish()
        self.source = source
    }

    mutating func item(type: UInt8, length: Int, from reader: inout ByteReader) throws(RTCPParseError) {
        let value = try reader.bytesArray(length, or: RTCPParseError.truncated)
        items.append(SDESItem(type: SDESItemType(rawValue: type), value: value))
    }

    mutating func finish() {
        guard let source else { return }
        chunks.append(SDESChunk(source: source, items: items))
        self.source = nil
        items = []
    }
}

/// Skips the values (`validate`).
private struct ItemCounter: SDESWalkSink {
    mutating func startChunk(_ source: SSRC) {}
    mutating func item(type: UInt8, length: Int, from reader: inout ByteReader) throws(RTCPParseError) {
        try reader.skip(length, or: RTCPParseError.truncated)
    }
    mutating func finish() {}
}
