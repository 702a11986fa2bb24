import Wire

/// The abs-send-time header extension: the sender's send time as 24-bit
/// fixed point, 6 bits of seconds and 18 of fraction, so it wraps every 64
/// seconds and has a resolution of about 3.8 microseconds.
package struct AbsoluteSendTime: Equatable, Hashable, Sendable {
    /// The 24-bit value; the top byte is always zero.
    package let rawValue: UInt32
    package static let modulus: UInt32 = 1 << 24

    package init(rawValue: UInt32) { self.rawValue = rawValue & (Self.modulus - 1) }

    /// From a time in nanoseconds on any clock (only the remainder modulo
    /// 64 s matters).
    package init(nanoseconds: UInt64) {
        let withinWrap = nanoseconds % 64_000_000_000
        // withinWrap < 2^36, so the shift cannot overflow 64 bits.
        rawValue = UInt32(truncatingIfNeeded: (withinWrap << 18) / 1_000_000_000) & (Self.modulus - 1)
    }

    /// Reads the element value: exactly 3 bytes, big-endian.
    package init?(value: RawSpan) {
        guard value.byteCount == 3 else { return nil }
        rawValue = UInt32(value.byte(at: 0)) << 16 | UInt32(value.byte(at: 1)) << 8 | UInt32(value.byte(at: 2))
    }

    /// The value in nanoseconds within its 64-second wrap.
    package var nanoseconds: UInt64 { (UInt64(rawValue) * 1_000_000_000) >> 18 }
}
