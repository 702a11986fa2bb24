/// A certificate fingerprint as carried in SDP `a=fingerprint` (RFC 8122
/// section 5): a hash function name and the digest of the DER certificate.
///
/// RFC 8122 section 5 writes the digest as uppercase hex pairs joined by
/// colons (`UHEX`); lowercase is accepted on input because deployed peers
/// send it, and output is always uppercase.
package struct CertificateFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// Hash functions from the IANA "Hash Function Textual Names" registry
    /// that RFC 8122 section 5 allows. MD5 and MD2 are not accepted (RFC 8122
    /// section 5: they MUST NOT be used).
    package enum Algorithm: String, CaseIterable, Hashable, Sendable {
        case sha1 = "sha-1"
        case sha224 = "sha-224"
        case sha256 = "sha-256"
        case sha384 = "sha-384"
        case sha512 = "sha-512"

        /// Digest length in bytes.
        package var digestLength: Int {
            switch self {
            case .sha1: 20
            case .sha224: 28
            case .sha256: 32
            case .sha384: 48
            case .sha512: 64
            }
        }
    }

    package let algorithm: Algorithm
    package let digest: [UInt8]

    /// Fails when the digest length does not fit the algorithm.
    package init?(algorithm: Algorithm, digest: [UInt8]) {
        guard digest.count == algorithm.digestLength else { return nil }
        self.algorithm = algorithm
        self.digest = digest
    }

    /// Parses the attribute value after `a=fingerprint:`, e.g.
    /// `sha-256 AB:CD:...`. The hash name is matched case-insensitively;
    /// every byte must be exactly two hex digits and their count must equal
    /// the algorithm's digest length. Returns nil on anything else.
    package init?(sdpValue: String) {
        let utf8 = Array(sdpValue.utf8)
        // hash-func SP fingerprint (RFC 8122 section 5); tolerate extra
        // blanks around the two tokens, which some peers emit.
        var tokens: [ArraySlice<UInt8>] = []
        var start: Int? = nil
        for (i, byte) in utf8.enumerated() {
            let isBlank = byte == 0x20 || byte == 0x09
            if isBlank {
                if let s = start { tokens.append(utf8[s..<i]); start = nil }
            } else if start == nil {
                start = i
            }
        }
        if let s = start { tokens.append(utf8[s..<utf8.count]) }
        guard tokens.count == 2 else { return nil }
        let name = String(decoding: tokens[0].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        guard let algorithm = Algorithm(rawValue: name) else { return nil }
        guard let digest = Self.parseHexPairs(tokens[1]) else { return nil }
        self.init(algorithm: algorithm, digest: digest)
    }

    /// The attribute value in RFC 8122 section 5 form: the hash name, one
    /// space, uppercase hex pairs joined by colons.
    package var sdpValue: String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var out = Array(algorithm.rawValue.utf8)
        out.append(0x20)
        for (i, byte) in digest.enumerated() {
            if i > 0 { out.append(0x3A) }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    package var description: String { sdpValue }

    private static func parseHexPairs(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        // 2HEX *(":" 2HEX): length is 3n - 1 for n bytes.
        guard (text.count + 1) % 3 == 0 else { return nil }
        var digest: [UInt8] = []
        digest.reserveCapacity((text.count + 1) / 3)
        var index = text.startIndex
        while index < text.endIndex {
            guard index + 1 < text.endIndex,
                let high = hexValue(text[index]), let low = hexValue(text[index + 1])
            else { return nil }
            digest.append(high << 4 | low)
            index += 2
            if index < text.endIndex {
                guard text[index] == 0x3A, index + 1 < text.endIndex else { return nil }
                index += 1
            }
        }
        return digest
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
