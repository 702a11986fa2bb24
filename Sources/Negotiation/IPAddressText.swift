import Wire

// IP address literals as SDP candidates write them (RFC 8839 section 5.1:
// IPv4 dotted decimal, IPv6 RFC 4291 section 2.2 text). Candidates whose
// address is an FQDN (mDNS `.local` names, RFC 8839 section 5.1 allows
// them) do not parse here and are skipped: we never resolve names.

extension TransportAddress {
    /// Parses `192.0.2.1`, `2001:db8::1` or `::ffff:192.0.2.1`; nil for
    /// anything else (names, zone ids, brackets, out-of-range groups).
    init?(ipLiteral text: String, port: UInt16) {
        let bytes = Array(text.utf8)
        if bytes.contains(0x3A) {
            guard let v6 = parseIPv6(bytes[...]) else { return nil }
            self.init(addressBytes: v6, port: port)
        } else {
            guard let v4 = parseIPv4(bytes[...]) else { return nil }
            self.init(addressBytes: v4, port: port)
        }
    }

    /// The address without port: dotted decimal, or IPv6 hex groups in
    /// full (no `::` compression; still valid RFC 4291 text).
    var ipLiteral: String {
        let b = addressBytes
        switch family {
        case .ipv4:
            return b.map { String($0) }.joined(separator: ".")
        case .ipv6:
            return stride(from: 0, to: 16, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }
                .joined(separator: ":")
        }
    }
}

private func parseIPv4(_ text: ArraySlice<UInt8>) -> [UInt8]? {
    let parts = text.split(separator: 0x2E, omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var out: [UInt8] = []
    for part in parts {
        guard !part.isEmpty, part.count <= 3 else { return nil }
        var value = 0
        for c in part {
            guard c >= 0x30, c <= 0x39 else { return nil }
            value = value * 10 + Int(c - 0x30)
        }
        guard value <= 255 else { return nil }
        out.append(UInt8(value))
    }
    return out
}

private func parseIPv6(_ text: ArraySlice<UInt8>) -> [UInt8]? {
    // Split once around "::"; each side is a list of 1...4-digit hex groups,
    // the last of which may be an embedded IPv4 address.
    func groups(_ side: ArraySlice<UInt8>, allowIPv4: Bool) -> [UInt8]? {
        if side.isEmpty { return [] }
        let parts = side.split(separator: 0x3A, omittingEmptySubsequences: false)
        var out: [UInt8] = []
        for (i, part) in parts.enumerated() {
            if allowIPv4, i == parts.count - 1, part.contains(0x2E) {
                guard let v4 = parseIPv4(part) else { return nil }
                out += v4
                continue
            }
            guard !part.isEmpty, part.count <= 4 else { return nil }
            var value: UInt16 = 0
            for c in part {
                let digit: UInt16
                switch c {
                case 0x30...0x39: digit = UInt16(c - 0x30)
                case 0x41...0x46: digit = UInt16(c - 0x41 + 10)
                case 0x61...0x66: digit = UInt16(c - 0x61 + 10)
                default: return nil
                }
                value = value << 4 | digit
            }
            out.append(UInt8(value >> 8))
            out.append(UInt8(value & 0xFF))
        }
        return out
    }
    var head = text
    var tail: ArraySlice<UInt8>?
    var i = text.startIndex
    while i + 1 < text.endIndex {
        if text[i] == 0x3A, text[i + 1] == 0x3A {
            head = text[text.startIndex..<i]
            tail = text[(i + 2)..<text.endIndex]
            break
        }
        i += 1
    }
    guard let h = groups(head, allowIPv4: tail == nil) else { return nil }
    guard let tail else { return h.count == 16 ? h : nil }
    guard let t = groups(tail, allowIPv4: true) else { return nil }
    // "::" stands for at least one zero group.
    guard h.count + t.count <= 14 else { return nil }
    return h + [UInt8](repeating: 0, count: 16 - h.count - t.count) + t
}
