/// Extends 16-bit RTP sequence numbers to 64 bits (RFC 3550 appendix A.1).
///
/// A new value is placed at the 64-bit position closest to the previous
/// one, so reordering within half the 16-bit space moves backwards and a
/// wrap moves forwards. Extended values never go below zero: a packet that
/// would (reordered before the very first one) is placed in cycle zero.
package struct SequenceNumberUnwrapper: Sendable {
    private var last: UInt64?
    package init() {}

    package mutating func unwrap(_ value: UInt16) -> UInt64 {
        guard let last else {
            // Start one cycle up so that early reordering can go backwards.
            let first = (1 << 16) | UInt64(value)
            self.last = first
            return first
        }
        let v = Self.closest(to: last, value: UInt64(value), bits: 16)
        if v > last { self.last = v }
        return v
    }

    static func closest(to last: UInt64, value: UInt64, bits: UInt64) -> UInt64 {
        let modulus: UInt64 = 1 << bits
        let half = modulus >> 1
        let base = last & ~(modulus - 1)
        var candidate = base | value
        if candidate > last, candidate - last > half {
            candidate = candidate >= modulus ? candidate - modulus : candidate
        } else if candidate < last, last - candidate > half {
            candidate += modulus
        }
        return candidate
    }
}

/// Extends 32-bit RTP timestamps to 64 bits, the same way as sequence
/// numbers (half the space decides forwards or backwards).
package struct TimestampUnwrapper: Sendable {
    private var last: UInt64?
    package init() {}

    package mutating func unwrap(_ value: UInt32) -> UInt64 {
        guard let last else {
            let first = (1 << 32) | UInt64(value)
            self.last = first
            return first
        }
        let v = SequenceNumberUnwrapper.closest(to: last, value: UInt64(value), bits: 32)
        if v > last { self.last = v }
        return v
    }
}

extension UInt16 {
    /// `true` when `self` comes after `other` in RFC 1982 serial arithmetic.
    @inline(__always)
    package func isNewer(than other: UInt16) -> Bool {
        self != other && self &- other < 0x8000
    }
}

extension UInt32 {
    /// `true` when `self` comes after `other` in RFC 1982 serial arithmetic.
    @inline(__always)
    package func isNewer(than other: UInt32) -> Bool {
        self != other && self &- other < 0x8000_0000
    }
}
