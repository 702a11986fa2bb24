/// A fixed ring of flags for the last `capacity` extended numbers (sequence
/// numbers or picture IDs) at or below a moving highest value. Nothing
/// allocates: the bits live inline in the owner.
struct RecentNumberWindow: Sendable {
    static let capacity: UInt64 = 256

    private var words: InlineArray<4, UInt64> = .init(repeating: 0)

    @inline(__always)
    private static func place(_ n: UInt64) -> (word: Int, bit: UInt64) {
        (Int(truncatingIfNeeded: (n >> 6) & 3), n & 63)
    }

    @inline(__always)
    func contains(_ n: UInt64) -> Bool {
        let (w, b) = Self.place(n)
        return words[w] >> b & 1 == 1
    }

    @inline(__always)
    mutating func insert(_ n: UInt64) {
        let (w, b) = Self.place(n)
        words[w] |= 1 << b
    }

    /// Clears the flags of `from ... through`, the numbers the window moves
    /// over when its highest value advances (at most `capacity` of them).
    mutating func clear(from: UInt64, through: UInt64) {
        guard from <= through else { return }
        if through - from >= Self.capacity - 1 {
            words = .init(repeating: 0)
            return
        }
        var n = from
        while n <= through {
            let (w, b) = Self.place(n)
            words[w] &= ~(1 << b)
            n += 1
        }
    }

    /// How many of `from ... through` are flagged (the range must lie in the
    /// window: fewer than `capacity` numbers).
    func count(from: UInt64, through: UInt64) -> UInt64 {
        guard from <= through else { return 0 }
        var total: UInt64 = 0
        var n = from
        while n <= through {
            if contains(n) { total += 1 }
            n += 1
        }
        return total
    }
}

/// Extends serial numbers of `bits` bits (VP8 picture IDs: 7 or 15) to 64
/// bits, choosing the value nearest the newest one seen (RFC 1982
/// arithmetic). The first value lands one cycle up, so that reordering
/// before it does not go below zero.
struct SerialNumberUnwrapper: Sendable {
    let bits: UInt64
    private var last: UInt64?

    init(bits: UInt64) { self.bits = bits }

    mutating func unwrap(_ value: UInt64) -> UInt64 {
        let modulus: UInt64 = 1 << bits
        let v = value & (modulus - 1)
        guard let last else {
            let first = modulus | v
            self.last = first
            return first
        }
        let half = modulus >> 1
        var candidate = (last & ~(modulus - 1)) | v
        if candidate > last, candidate - last > half {
            if candidate >= modulus { candidate -= modulus }
        } else if candidate < last, last - candidate > half {
            candidate += modulus
        }
        if candidate > last { self.last = candidate }
        return candidate
    }
}
