/// Base64 (RFC 4648 section 4) for the WebSocket handshake, and base64url
/// without padding (RFC 4648 section 5, RFC 7515 section 2) for access
/// tokens.
///
/// Decoding is strict: no whitespace, padding only where the alphabet uses
/// it, and the unused low bits of the last character must be zero, so every
/// byte string has exactly one accepted encoding (a token's signature cannot
/// be re-encoded into a second valid token).
package enum Base64 {
    package enum Alphabet {
        /// `+` and `/`, padded with `=` to a multiple of four characters.
        case standard
        /// `-` and `_`, never padded.
        case url
    }

    package static func encode(_ bytes: [UInt8], _ alphabet: Alphabet) -> String {
        let table: [UInt8] = Array(
            (alphabet == .standard
                ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_").utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [table[Int(v >> 18 & 63)], table[Int(v >> 12 & 63)], table[Int(v >> 6 & 63)], table[Int(v & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let v = UInt32(bytes[i]) << 16
            out += [table[Int(v >> 18 & 63)], table[Int(v >> 12 & 63)]]
            if alphabet == .standard { out += Array("==".utf8) }
        } else if rest == 2 {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [table[Int(v >> 18 & 63)], table[Int(v >> 12 & 63)], table[Int(v >> 6 & 63)]]
            if alphabet == .standard { out.append(UInt8(ascii: "=")) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The decoded bytes, or nil when `text` is not the canonical encoding
    /// of some byte string in this alphabet.
    package static func decode(_ text: some StringProtocol, _ alphabet: Alphabet) -> [UInt8]? {
        var chars = Array(text.utf8)
        if alphabet == .standard {
            guard chars.count % 4 == 0 else { return nil }
            var padding = 0
            while padding < 2, chars.last == UInt8(ascii: "=") {
                chars.removeLast()
                padding += 1
            }
        }
        // A lone trailing character carries only 6 bits: never a whole byte.
        guard chars.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in chars {
            guard let v = value(of: c, alphabet) else { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Leftover bits (2 or 4) must be zero in the canonical encoding.
        guard accumulator == 0 else { return nil }
        return out
    }

    private static func value(of c: UInt8, _ alphabet: Alphabet) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+") where alphabet == .standard: return 62
        case UInt8(ascii: "/") where alphabet == .standard: return 63
        case UInt8(ascii: "-") where alphabet == .url: return 62
        case UInt8(ascii: "_") where alphabet == .url: return 63
        default: return nil
        }
    }
}
