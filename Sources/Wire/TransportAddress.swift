/// An IPv4 or IPv6 address and a port, kept inline: the 4 or 16 address
/// bytes live in two integers, never on the heap, so it is cheap to hash and
/// compare per packet. The one address type of every layer: STUN's
/// (XOR-)MAPPED-ADDRESS (RFC 8489 sections 14.1 and 14.2), ICE candidates,
/// and the I/O shell's peers (NetIO converts to and from `sockaddr`).
package struct TransportAddress: Hashable, Sendable, CustomStringConvertible {
    /// Raw values are the family byte of STUN's address attributes
    /// (RFC 8489 section 14.1).
    package enum Family: UInt8, Hashable, Sendable {
        case ipv4 = 0x01
        case ipv6 = 0x02

        /// Address bytes that follow the port for this family.
        package var addressLength: Int { self == .ipv4 ? 4 : 16 }
    }

    /// The transport protocol of the address. RFC 8445 section 3 defines a
    /// transport address as an IP address, a port *and* a protocol: a TCP
    /// connection from 192.0.2.1:5000 (RFC 6544) is not the UDP peer on
    /// 192.0.2.1:5000, so the two never share a route, a validated pair or
    /// a hash slot. STUN's address attributes carry no protocol: parsed
    /// addresses are UDP, and the I/O shell marks the TCP ones.
    package enum TransportProtocol: UInt8, Hashable, Sendable {
        case udp
        case tcp
    }

    package let family: Family
    package var port: UInt16
    /// UDP unless the shell says otherwise (it fits in padding: no size cost).
    package var transportProtocol: TransportProtocol = .udp
    // Address bytes in wire order: IPv4 in the low 32 bits of `low`;
    // IPv6 bytes 0..<8 in `high`, 8..<16 in `low`.
    private let high: UInt64
    private let low: UInt64

    package init(ipv4 address: UInt32, port: UInt16) {
        family = .ipv4
        self.port = port
        high = 0
        low = UInt64(address)
    }

    package init(ipv4 a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, port: UInt16) {
        self.init(ipv4: UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d), port: port)
    }

    package init(ipv6 high: UInt64, _ low: UInt64, port: UInt16) {
        family = .ipv6
        self.port = port
        self.high = high
        self.low = low
    }

    /// Fails unless `bytes` holds 4 (IPv4) or 16 (IPv6) address bytes.
    package init?(addressBytes bytes: [UInt8], port: UInt16) {
        switch bytes.count {
        case 4:
            self.init(ipv4: bytes.reduce(0) { $0 << 8 | UInt32($1) }, port: port)
        case 16:
            self.init(
                ipv6: bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) },
                bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }, port: port)
        default:
            return nil
        }
    }

    /// The IPv4 address as a 32-bit big-endian value; nil for IPv6.
    package var ipv4: UInt32? { family == .ipv4 ? UInt32(truncatingIfNeeded: low) : nil }

    /// The IPv6 address as two 64-bit big-endian halves; nil for IPv4.
    package var ipv6: (high: UInt64, low: UInt64)? { family == .ipv6 ? (high, low) : nil }

    /// Address byte `index` in wire order; 0 out of range.
    package func addressByte(at index: Int) -> UInt8 {
        switch (family, index) {
        case (.ipv4, 0..<4): UInt8(truncatingIfNeeded: low >> (8 * UInt64(3 - index)))
        case (.ipv6, 0..<8): UInt8(truncatingIfNeeded: high >> (8 * UInt64(7 - index)))
        case (.ipv6, 8..<16): UInt8(truncatingIfNeeded: low >> (8 * UInt64(15 - index)))
        default: 0
        }
    }

    package var addressBytes: [UInt8] { (0..<family.addressLength).map { addressByte(at: $0) } }

    /// This address over TCP (RFC 6544): same IP and port, another protocol.
    package var overTCP: TransportAddress {
        var a = self
        a.transportProtocol = .tcp
        return a
    }

    /// `192.0.2.1:32853` or `[2001:db8:0:0:0:0:0:1]:443` (IPv6 groups are
    /// written in full, without `::` compression); `tcp:` in front of a TCP
    /// address.
    package var description: String {
        let prefix = transportProtocol == .tcp ? "tcp:" : ""
        switch family {
        case .ipv4:
            return prefix + addressBytes.map { String($0) }.joined(separator: ".") + ":\(port)"
        case .ipv6:
            let b = addressBytes
            let groups = stride(from: 0, to: 16, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }
            return prefix + "[" + groups.joined(separator: ":") + "]:\(port)"
        }
    }
}
