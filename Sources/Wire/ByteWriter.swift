/// Appends big-endian fields to a growable byte array. Used to build
/// control packets (STUN, RTCP feedback, SDP-adjacent bytes); the media path
/// rewrites headers in place with `MutableBytes` instead.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    public mutating func uint8(_ v: UInt8) { bytes.append(v) }
    public mutating func uint16(_ v: UInt16) {
        bytes.append(UInt8(v >> 8)); bytes.append(UInt8(truncatingIfNeeded: v))
    }
    public mutating func uint24(_ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }
    public mutating func uint32(_ v: UInt32) {
        uint16(UInt16(truncatingIfNeeded: v >> 16)); uint16(UInt16(truncatingIfNeeded: v))
    }
    public mutating func uint64(_ v: UInt64) {
        uint32(UInt32(truncatingIfNeeded: v >> 32)); uint32(UInt32(truncatingIfNeeded: v))
    }
    public mutating func append<S: Sequence>(_ s: S) where S.Element == UInt8 { bytes.append(contentsOf: s) }
    public mutating func zeros(_ n: Int) { bytes.append(contentsOf: repeatElement(0, count: n)) }
    /// Pads with zeros to a multiple of `alignment` (4 for STUN and RTCP).
    public mutating func pad(to alignment: Int) {
        let r = bytes.count % alignment
        if r != 0 { zeros(alignment - r) }
    }

    /// Overwrites a big-endian field already written (for length fields
    /// known only once the body is done).
    public mutating func set(uint16 v: UInt16, at offset: Int) {
        bytes[offset] = UInt8(v >> 8); bytes[offset + 1] = UInt8(truncatingIfNeeded: v)
    }
    public mutating func set(uint32 v: UInt32, at offset: Int) {
        set(uint16: UInt16(truncatingIfNeeded: v >> 16), at: offset)
        set(uint16: UInt16(truncatingIfNeeded: v), at: offset + 2)
    }
    public mutating func set(uint8 v: UInt8, at offset: Int) { bytes[offset] = v }
}
