/// Splits a TURN byte stream (TCP or TLS, RFC 8656 section 12.5 and RFC
/// 8489 section 6.2.2) into messages: a STUN message is its 20-byte header
/// plus the length in it; a ChannelData message is its 4-byte header plus
/// the length in it, rounded up to 4. Nothing else may appear on the
/// stream, so a first byte outside both ranges is an error that ends the
/// connection (there is no way to find the next message boundary).
///
/// Buffering is bounded by the largest message either framing can
/// declare (20 + 65535 bytes), so a peer cannot make it grow further.
package struct TURNStreamFramer: Sendable {
    /// The longest frame: a STUN header and the largest length it can hold.
    package static let maxFrameLength = 20 + 0xFFFF
    private var buffer: [UInt8] = []
    private var start = 0

    package init() {}

    /// Bytes held that do not yet form a whole message.
    package var bufferedCount: Int { buffer.count - start }

    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    package mutating func append(_ bytes: [UInt8]) { bytes.withUnsafeBytes { append($0) } }

    /// The next whole message, nil until one is complete. The frame of a
    /// ChannelData message keeps its padding; `ChannelData.parse` ignores it.
    package mutating func next() throws(TURNParseError) -> [UInt8]? {
        let available = buffer.count - start
        guard available >= 4 else { return nil }
        let first = buffer[start]
        let declared = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
        let frame: Int
        if first & 0xC0 == 0 {
            frame = 20 + declared
        } else if ChannelData.isChannelData(firstByte: first) {
            frame = ChannelData.headerLength + ((declared + 3) & ~3)
        } else {
            throw .notTURN
        }
        guard available >= frame else { return nil }
        let out = Array(buffer[start..<start + frame])
        start += frame
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1 << 16 {
            buffer.removeFirst(start)
            start = 0
        }
        return out
    }
}
