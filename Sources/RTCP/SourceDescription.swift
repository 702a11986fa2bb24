import Wire

/// SDES item types (RFC 3550 section 6.5, section 12.2).
public struct SDESItemType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Ends a chunk's item list; never a real item.
    public static let end = SDESItemType(rawValue: 0)
    public static let cname = SDESItemType(rawValue: 1)
    public static let name = SDESItemType(rawValue: 2)
    public static let email = SDESItemType(rawValue: 3)
    public static let phone = SDESItemType(rawValue: 4)
    public static let location = SDESItemType(rawValue: 5)
    public static let tool = SDESItemType(rawValue: 6)
    public static let note = SDESItemType(rawValue: 7)
    /// PRIV: the value starts with its own prefix length and prefix; kept raw.
    public static let priv = SDESItemType(rawValue: 8)
}

/// One SDES item: type, 8-bit length, value (RFC 3550 section 6.5).
public struct SDESItem: Equatable, Sendable {
    public var type: SDESItemType
    /// Raw value bytes (UTF-8 text for the standard items), at most 255.
    public var value: [UInt8]

    public init(type: SDESItemType, value: [UInt8]) {
        self.type = type
        self.value = value
    }

    public init(type: SDESItemType, text: String) {
        self.init(type: type, value: Array(text.utf8))
    }

    public var text: String { String(decoding: value, as: UTF8.self) }
}

/// One SDES chunk: an SSRC/CSRC and its items.
public struct SDESChunk: Equatable, Sendable {
    public var source: SSRC
    public var items: [SDESItem]

    public init(source: SSRC, items: [SDESItem]) {
        self.source = source
        self.items = items
    }

    /// The first CNAME item's text, if any.
    public var cname: String? { items.first { $0.type == .cname }?.text }
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
public struct SourceDescription: Equatable, Sendable {
    public static let maximumChunks = 31
    /// Items allowed per packet, over all chunks. Real senders send one or
    /// two (CNAME, sometimes MID); the bound keeps a hostile packet of tiny
    /// items from costing thousands of allocations.
    public static let maximumItems = 64

    public var chunks: [SDESChunk]

    public init(chunks: [SDESChunk]) { self.chunks = chunks }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> SourceDescription {
        // Each chunk takes at least 8 bytes (SSRC, then the terminator padded
        // to 32 bits).
        guard reader.canRead(Int(header.count) * 8) else { throw .countBeyondPacket }
        var chunks: [SDESChunk] = []
        chunks.reserveCapacity(Int(header.count))
        var itemCount = 0
        for _ in 0..<header.count {
            let source = try reader.ssrc(or: .truncated)
            var items: [SDESItem] = []
            while true {
                let type = try reader.uint8(or: RTCPParseError.truncated)
                if type == 0 { break }
                itemCount += 1
                guard itemCount <= maximumItems else { throw .tooManyItems }
                let length = try reader.uint8(or: RTCPParseError.truncated)
                let value = try reader.bytesArray(Int(length), or: RTCPParseError.truncated)
                items.append(SDESItem(type: SDESItemType(rawValue: type), value: value))
            }
            // Skip the rest of the terminator's 32-bit word. Chunks start on
            // 32-bit boundaries, as offsets from the packet start are.
            let misalignment = reader.offset % 4
            if misalignment != 0 { try reader.skip(4 - misalignment, or: RTCPParseError.truncated) }
            chunks.append(SDESChunk(source: source, items: items))
        }
        return SourceDescription(chunks: chunks)
    }

    /// Appends the packet. Only the first `maximumChunks` chunks fit the
    /// 5-bit count, and item values are cut to 255 bytes.
    public func serialize(into writer: inout ByteWriter) {
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

    public func serialized() -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer)
        return writer.bytes
    }
}
