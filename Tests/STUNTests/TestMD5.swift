import Foundation

/// A minimal MD5 (RFC 1321), only to derive the long-term credential key of
/// the RFC 5769 section 2.4 vector. Not for production: STUN implements
/// short-term credentials only.
enum TestMD5 {
    static func digest(_ message: [UInt8]) -> [UInt8] {
        let shifts: [UInt32] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]
        let k: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296)) }
        var data = message + [0x80]
        while data.count % 64 != 56 { data.append(0) }
        let bitLength = UInt64(message.count) * 8
        for i in 0..<8 { data.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))) }

        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476]
        for chunk in stride(from: 0, to: data.count, by: 64) {
            let m: [UInt32] = (0..<16).map { w in
                (0..<4).reduce(0) { $0 | UInt32(data[chunk + 4 * w + $1]) << (8 * UInt32($1)) }
            }
            var (a, b, c, d) = (h[0], h[1], h[2], h[3])
            for i in 0..<64 {
                let f: UInt32, g: Int
                switch i {
                case 0..<16: f = (b & c) | (~b & d); g = i
                case 16..<32: f = (d & b) | (~d & c); g = (5 * i + 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16
                default: f = c ^ (b | ~d); g = (7 * i) % 16
                }
                let s = shifts[(i / 16) * 4 + i % 4]
                let sum = f &+ a &+ k[i] &+ m[g]
                (a, d, c) = (d, c, b)
                b = b &+ (sum << s | sum >> (32 - s))
            }
            h[0] = h[0] &+ a; h[1] = h[1] &+ b; h[2] = h[2] &+ c; h[3] = h[3] &+ d
        }
        return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) } }
    }
}
