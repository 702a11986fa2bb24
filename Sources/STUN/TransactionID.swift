import CryptoPrimitives

/// The 96-bit transaction id of a STUN message (RFC 8489 section 5), kept
/// inline: no heap allocation to compare, hash or copy one.
///
/// A client picks it uniformly at random for each new request (RFC 8489
/// section 6.1.1); responses echo it, which is how ICE matches a response
/// to its check.
package struct TransactionID: Hashable, Sendable, CustomStringConvertible {
    /// Bytes 0..<4 of the id, big-endian.
    package let high: UInt32
    /// Bytes 4..<12 of the id, big-endian.
    package let low: UInt64

    package static let byteCount = 12

    package init(high: UInt32, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Fails unless `bytes` holds exactly 12 bytes.
    package init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        var h: UInt32 = 0
        var l: UInt64 = 0
        for b in bytes[0..<4] { h = h << 8 | UInt32(b) }
        for b in bytes[4..<12] { l = l << 8 | UInt64(b) }
        self.init(high: h, low: l)
    }

    /// A fresh id from the cryptographically secure generator, as RFC 8489
    /// section 6.1.1 requires so that off-path attackers cannot forge
    /// responses.
    package static func random() -> TransactionID {
        TransactionID(bytes: SecureRandom.bytes(byteCount)) ?? TransactionID(high: 0, low: 0)
    }

    /// Byte `index` (0..<12) in wire order; 0 for an index out of range.
    package func byte(at index: Int) -> UInt8 {
        switch index {
        case 0..<4: UInt8(truncatingIfNeeded: high >> (8 * UInt32(3 - index)))
        case 4..<12: UInt8(truncatingIfNeeded: low >> (8 * UInt64(11 - index)))
        default: 0
        }
    }

    package var bytes: [UInt8] { (0..<Self.byteCount).map { byte(at: $0) } }

    package var description: String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
