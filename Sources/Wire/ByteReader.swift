/// A forward-only, bounds-checked reader over borrowed bytes, in network
/// byte order.
///
/// Every read checks the bytes present before it touches them and reports a
/// shortfall to the caller, which turns it into its own typed error
/// (`try reader.uint16(or: .truncated)`), so a length or count taken from
/// the wire can never make a parser read past the packet. The reader is
/// non-escapable: it borrows the packet's `RawSpan` and cannot outlive it,
/// so parsing copies nothing.
package struct ByteReader: ~Escapable {
    package let bytes: RawSpan
    /// Offset of the next byte to read, from the start of `bytes`.
    package private(set) var offset: Int

    @_lifetime(copy bytes)
    package init(_ bytes: RawSpan, offset: Int = 0) {
        self.bytes = bytes
        self.offset = min(max(offset, 0), bytes.byteCount)
    }

    package var remaining: Int { bytes.byteCount - offset }
    package var isAtEnd: Bool { remaining == 0 }

    @inline(__always)
    package func canRead(_ count: Int) -> Bool { count >= 0 && remaining >= count }

    @inline(__always)
    package mutating func uint8<E: Error>(or error: @autoclosure () -> E) throws(E) -> UInt8 {
        guard canRead(1) else { throw error() }
        let v = bytes.unsafeLoad(fromByteOffset: offset, as: UInt8.self)
        offset += 1
        return v
    }

    @inline(__always)
    package mutating func uint16<E: Error>(or error: @autoclosure () -> E) throws(E) -> UInt16 {
        guard canRead(2) else { throw error() }
        let v = UInt16(bigEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt16.self))
        offset += 2
        return v
    }

    /// A 24-bit big-endian value, as in RTCP report blocks and TWCC.
    @inline(__always)
    package mutating func uint24<E: Error>(or error: @autoclosure () -> E) throws(E) -> UInt32 {
        guard canRead(3) else { throw error() }
        let hi = UInt32(bytes.unsafeLoad(fromByteOffset: offset, as: UInt8.self))
        let mid = UInt32(bytes.unsafeLoad(fromByteOffset: offset + 1, as: UInt8.self))
        let lo = UInt32(bytes.unsafeLoad(fromByteOffset: offset + 2, as: UInt8.self))
        offset += 3
        return hi << 16 | mid << 8 | lo
    }

    @inline(__always)
    package mutating func uint32<E: Error>(or error: @autoclosure () -> E) throws(E) -> UInt32 {
        guard canRead(4) else { throw error() }
        let v = UInt32(bigEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt32.self))
        offset += 4
        return v
    }

    @inline(__always)
    package mutating func uint64<E: Error>(or error: @autoclosure () -> E) throws(E) -> UInt64 {
        guard canRead(8) else { throw error() }
        let v = UInt64(bigEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
        offset += 8
        return v
    }

    /// Skips `count` bytes.
    @inline(__always)
    package mutating func skip<E: Error>(_ count: Int, or error: @autoclosure () -> E) throws(E) {
        guard canRead(count) else { throw error() }
        offset += count
    }

    /// The next `count` bytes as a span over the same memory, and advances.
    @_lifetime(copy self)
    package mutating func span<E: Error>(_ count: Int, or error: @autoclosure () -> E) throws(E) -> RawSpan {
        guard canRead(count) else { throw error() }
        let s = bytes.extracting(offset..<offset + count)
        offset += count
        return s
    }

    /// A reader over the next `count` bytes only, and advances past them.
    /// Used for length-prefixed sub-structures so that the inner parser can
    /// never run into the bytes that follow.
    @_lifetime(copy self)
    package mutating func subReader<E: Error>(_ count: Int, or error: @autoclosure () -> E) throws(E) -> ByteReader {
        ByteReader(try span(count, or: error()))
    }

    /// The next `count` bytes copied into an array (for control-plane values
    /// such as STUN usernames, never on the media path).
    package mutating func bytesArray<E: Error>(_ count: Int, or error: @autoclosure () -> E) throws(E) -> [UInt8] {
        guard canRead(count) else { throw error() }
        var out = [UInt8](repeating: 0, count: count)
        for i in 0..<count { out[i] = bytes.unsafeLoad(fromByteOffset: offset + i, as: UInt8.self) }
        offset += count
        return out
    }

    /// Peeks at a byte relative to the current offset without consuming it.
    @inline(__always)
    package func peekUInt8(at relative: Int = 0) -> UInt8? {
        guard relative >= 0, canRead(relative + 1) else { return nil }
        return bytes.unsafeLoad(fromByteOffset: offset + relative, as: UInt8.self)
    }
}

extension RawSpan {
    /// Copies the bytes into an array. For tests and the control plane.
    package func copiedBytes() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        for i in 0..<byteCount { out[i] = unsafeLoad(fromByteOffset: i, as: UInt8.self) }
        return out
    }

    /// Byte at `offset`; the caller has checked the bounds.
    @inline(__always)
    package func byte(at offset: Int) -> UInt8 { unsafeLoad(fromByteOffset: offset, as: UInt8.self) }
}
