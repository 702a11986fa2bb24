import Wire

/// An IP network in CIDR notation ("10.0.0.0/8", "2001:db8::/32", or one
/// host: "127.0.0.1", "::1"), for lists such as the trusted proxies.
/// IPv4 prefixes also match IPv4-mapped IPv6 addresses (::ffff:a.b.c.d,
/// RFC 4291 section 2.5.5.2), the form a dual-stack listener reports.
package struct AddressPrefix: Hashable, Sendable, CustomStringConvertible {
    /// The network's bytes (4 or 16), host bits cleared.
    package let network: [UInt8]
    package let length: Int

    /// nil unless `text` is an address, optionally with `/N` in range for
    /// its family.
    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2,
            let address = SocketAddress(ip: String(parts[0]), port: 0)
        else { return nil }
        let bytes = Self.canonical(address.ipBytes)
        let length: Int
        if parts.count == 2 {
            guard let n = Int(parts[1]), n >= 0, n <= bytes.count * 8 else { return nil }
            length = n
        } else {
            length = bytes.count * 8
        }
        self.length = length
        network = Self.masked(bytes, length)
    }

    package func contains(_ address: SocketAddress) -> Bool {
        let bytes = Self.canonical(address.ipBytes)
        return bytes.count == network.count && Self.masked(bytes, length) == network
    }

    package var description: String {
        let address: String
        if network.count == 4 {
            address = network.map(String.init).joined(separator: ".")
        } else {
            address = stride(from: 0, to: 16, by: 2).map {
                String(UInt16(network[$0]) << 8 | UInt16(network[$0 + 1]), radix: 16)
            }.joined(separator: ":")
        }
        return "\(address)/\(length)"
    }

    /// IPv4-mapped IPv6 bytes as the IPv4 address they stand for.
    private static func canonical(_ bytes: [UInt8]) -> [UInt8] {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return Array(bytes[12..<16])
        }
        return bytes
    }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        var out = bytes
        for i in 0..<out.count {
            let bits = max(0, min(8, length - i * 8))
            out[i] &= bits == 8 ? 0xFF : ~(0xFF >> bits)
        }
        return out
    }
}

extension Array where Element == AddressPrefix {
    package func contains(_ address: SocketAddress?) -> Bool {
        guard let address else { return false }
        return contains { $0.contains(address) }
    }
}
