/// In-place big-endian stores into a packet buffer the caller owns, for
/// rewriting headers on the media path (SSRC, sequence number, timestamp,
/// payload type, extension values) without copying the packet.
///
/// Every store checks its bounds and returns `false` rather than trapping:
/// offsets normally come from a successful parse, but a rewrite must never
/// be able to take the process down.
package struct MutableBytes {
    package let base: UnsafeMutableRawBufferPointer

    package init(_ base: UnsafeMutableRawBufferPointer) { self.base = base }

    package var count: Int { base.count }

    @inline(__always) @discardableResult
    package func store(_ v: UInt8, at offset: Int) -> Bool {
        guard offset >= 0, offset < base.count else { return false }
        base[offset] = v
        return true
    }

    @inline(__always) @discardableResult
    package func store(_ v: UInt16, at offset: Int) -> Bool {
        guard offset >= 0, base.count - offset >= 2 else { return false }
        base.storeBytes(of: v.bigEndian, toByteOffset: offset, as: UInt16.self)
        return true
    }

    @inline(__always) @discardableResult
    package func store(_ v: UInt32, at offset: Int) -> Bool {
        guard offset >= 0, base.count - offset >= 4 else { return false }
        base.storeBytes(of: v.bigEndian, toByteOffset: offset, as: UInt32.self)
        return true
    }

    @inline(__always)
    package func load(_: UInt8.Type, at offset: Int) -> UInt8? {
        guard offset >= 0, offset < base.count else { return nil }
        return base[offset]
    }

    @inline(__always)
    package func load(_: UInt16.Type, at offset: Int) -> UInt16? {
        guard offset >= 0, base.count - offset >= 2 else { return nil }
        return UInt16(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    package func load(_: UInt32.Type, at offset: Int) -> UInt32? {
        guard offset >= 0, base.count - offset >= 4 else { return nil }
        return UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
