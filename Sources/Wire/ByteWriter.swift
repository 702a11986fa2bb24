/// Appends big-endian fields to a growable byte array. Used to build
/// control packets (STUN, RTCP feedback, SDP-adjacent bytes); the media path
/// rewrites headers in place with `MutableBytes` instead.
package struct ByteWriter: Sendable {
    package private(set) var bytes: [UInt8]

    package init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package var count: Int { bytes.count }

    /// Empties the writer, keeping its storage: a writer kept between
    /// messages writes without allocating once it has grown.
    package mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    package mutating func uint8(_ v: UInt8) { bytes.append(v) }
    package mutating func uint16(_ v: UInt16) {
        bytes.append(UInt8(v >> 8)); bytes.append(UInt8(truncatingIfNeeded: v))
    }
    package mutating func uint24(_ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }
    package mutating func uint32(_ v: UInt32) {
        uint16(UInt16(truncatingIfNeeded: v >> 16)); uint16(UInt16(truncatingIfNeeded: v))
    }
    package mutating func uint64(_ v: UInt64) {
        uint32(UInt32(truncatingIfNeeded: v >> 32)); uint32(UInt32(truncatingIfNeeded: v))
    }
    package mutating func append<S: Sequence>(_ s: S) where S.Element == UInt8 { bytes.append(contentsOf: s) }
    package mutating func zeros(_ n: Int) { bytes.append(contentsOf: repeatElement(0, count: n)) }
    /// Pads with zeros to a multiple of `alignment` (4 for STUN and RTCP).
    package mutating func pad(to alignment: Int) {
        let r = bytes.count % alignment
        if r != 0 { zeros(alignment - r) }
    }

    /// Overwrites a big-endian field already written (for length fields
    /// known only once the body is done).
    package mutating func set(uint16 v: UInt16, at offset: Int) {
        bytes[offset] = UInt8(v >> 8); bytes[offset + 1] = UInt8(truncatingIfNeeded: v)
    }
    package mutating func set(uint32 v: UInt32, at offset: Int) {
        set(uint16: UInt16(truncatingIfNeeded: v >> 16), at: offset)
        set(uint16: UInt16(truncatingIfNeeded: v), at: offset + 2)
    }
    package mutating func set(uint8 v: UInt8, at offset: Int) { bytes[offset] = v }

    /// Appends `count` zero bytes and lets `body` store fields into them in
    /// place: a layout written once with `MutableBytes` serves both this
    /// writer and a caller's buffer (RTCP reports built without allocating).
    package mutating func append(byteCount count: Int, _ body: (MutableBytes) -> Void) {
        let start = bytes.count
        zeros(count)
        bytes.withUnsafeMutableBytes { body(MutableBytes(UnsafeMutableRawBufferPointer(rebasing: $0[start..<start + count]))) }
    }
}
