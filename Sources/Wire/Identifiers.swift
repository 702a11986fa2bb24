/// RTP synchronization source identifier (RFC 3550 section 3).
package struct SSRC: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    package var rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package init(_ rawValue: UInt32) { self.rawValue = rawValue }
    package static func < (a: SSRC, b: SSRC) -> Bool { a.rawValue < b.rawValue }
    package var description: String { String(rawValue) }
}

/// RTP payload type: 7 bits (RFC 3550 section 5.1). Values 64...95 collide
/// with RTCP packet types 192...223 under RFC 5761 muxing and are never
/// assigned by us.
package struct PayloadType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt8
    /// Fails for values above 127.
    package init?(rawValue: UInt8) {
        guard rawValue < 128 else { return nil }
        self.rawValue = rawValue
    }
    /// Masks to 7 bits; for values read from the wire's 7-bit field.
    package init(masking value: UInt8) { rawValue = value & 0x7F }
    package var description: String { String(rawValue) }
}

/// A short ASCII token kept inline (no heap allocation), for identifiers
/// that arrive in RTP header extensions and must be compared per packet:
/// an RFC 8285 one-byte element carries at most 16 bytes.
package struct ShortToken: Hashable, Sendable, CustomStringConvertible {
    package static let capacity = 16
    // Bytes 0..<8 in `low`, 8..<16 in `high`, little-endian packing.
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    package private(set) var count: UInt8 = 0

    /// Fails when longer than 16 bytes or empty.
    package init?(bytes: RawSpan) {
        guard bytes.byteCount > 0, bytes.byteCount <= Self.capacity else { return nil }
        for i in 0..<bytes.byteCount { setByte(bytes.byte(at: i), at: i) }
        count = UInt8(bytes.byteCount)
    }

    package init?(_ string: String) {
        let utf8 = Array(string.utf8)
        guard !utf8.isEmpty, utf8.count <= Self.capacity else { return nil }
        for (i, b) in utf8.enumerated() { setByte(b, at: i) }
        count = UInt8(utf8.count)
    }

    private mutating func setByte(_ b: UInt8, at i: Int) {
        if i < 8 { low |= UInt64(b) << (8 * UInt64(i)) } else { high |= UInt64(b) << (8 * UInt64(i - 8)) }
    }

    package func byte(at i: Int) -> UInt8 {
        i < 8 ? UInt8(truncatingIfNeeded: low >> (8 * UInt64(i))) : UInt8(truncatingIfNeeded: high >> (8 * UInt64(i - 8)))
    }

    package var bytes: [UInt8] { (0..<Int(count)).map { byte(at: $0) } }
    package var description: String { String(decoding: bytes, as: UTF8.self) }
}

/// Media identification tag (RFC 8843 section 15), as in `a=mid` and the
/// `sdes:mid` header extension.
package struct MID: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    package let token: ShortToken
    package init(_ token: ShortToken) { self.token = token }
    package init?(_ string: String) { guard let t = ShortToken(string) else { return nil }; token = t }
    package init(stringLiteral value: String) { token = ShortToken(value)! }
    package var description: String { token.description }
}

/// RTP stream identifier (RFC 8852), as in `a=rid` and the
/// `sdes:rtp-stream-id` / `repaired-rtp-stream-id` header extensions.
package struct RID: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    package let token: ShortToken
    package init(_ token: ShortToken) { self.token = token }
    package init?(_ string: String) { guard let t = ShortToken(string) else { return nil }; token = t }
    package init(stringLiteral value: String) { token = ShortToken(value)! }
    package var description: String { token.description }
}
