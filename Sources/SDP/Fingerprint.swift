/// `a=fingerprint:<hash-func> <fingerprint>` (RFC 8122 section 5): the hash
/// of the DTLS certificate as upper-case hex pairs joined by colons.
/// A description may carry several (aiortc sends sha-256, 384 and 512).
package struct Fingerprint: Equatable, Sendable {
    /// Hash function name, stored lower-case (the textual names are
    /// case-insensitive, RFC 8122 section 5).
    package var algorithm: String
    package var bytes: [UInt8]

    package init(algorithm: String, bytes: [UInt8]) {
        self.algorithm = algorithm.lowercased()
        self.bytes = bytes
    }

    /// Digest lengths of the hash functions in the IANA registry that we
    /// check; other names accept any non-empty digest.
    static func digestLength(_ algorithm: String) -> Int? {
        switch algorithm {
        case "sha-1": 20
        case "sha-224": 28
        case "sha-256": 32
        case "sha-384": 48
        case "sha-512": 64
        case "md5", "md2": 16
        default: nil
        }
    }

    static func parse(_ value: Substring, line: Int) throws(SDPParseError) -> Fingerprint {
        let f = fields(value)
        guard f.count == 2 else { throw .malformed(.fingerprint, line: line) }
        let algorithm = f[0].lowercased()
        var bytes: [UInt8] = []
        for pair in pieces(f[1], ":") {
            let u = Array(pair.utf8)
            guard u.count == 2, let hi = hexValue(u[0]), let lo = hexValue(u[1]) else {
                throw .invalidFingerprint(line: line)
            }
            bytes.append(hi << 4 | lo)
        }
        if let n = digestLength(algorithm), bytes.count != n { throw .invalidFingerprint(line: line) }
        return Fingerprint(algorithm: algorithm, bytes: bytes)
    }

    /// Upper-case colon hex, as RFC 8122's grammar (UHEX) asks.
    package var hex: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3)
        for (i, b) in bytes.enumerated() {
            if i > 0 { out.append(0x3A) }
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    package var value: String { "\(algorithm) \(hex)" }
}

/// Hex digits in either case; RFC 8122 asks for upper case but browsers
/// have sent lower case, and a fingerprint compares as bytes anyway.
func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 0x30...0x39: c - 0x30
    case 0x41...0x46: c - 0x41 + 10
    case 0x61...0x66: c - 0x61 + 10
    default: nil
    }
}
