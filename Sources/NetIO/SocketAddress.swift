import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 UDP endpoint, stored as the kernel's `sockaddr_storage`
/// so it passes to and from system calls without conversion.
package struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    package enum Family: Sendable { case v4, v6 }

    package private(set) var storage: sockaddr_storage
    package var family: Family { Int32(storage.ss_family) == AF_INET6 ? .v6 : .v4 }

    package var length: socklen_t {
        socklen_t(family == .v4 ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
    }

    package init?(storage: sockaddr_storage) {
        let f = Int32(storage.ss_family)
        guard f == AF_INET || f == AF_INET6 else { return nil }
        self.storage = storage
    }

    /// Parses a numeric address ("127.0.0.1", "::1"); no name resolution.
    package init?(ip: String, port: UInt16) {
        var s = sockaddr_storage()
        if ip.contains(":") {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, ip, &a.sin6_addr) == 1 else { return nil }
            withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &s) { $0.copyMemory(from: src) } }
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = port.bigEndian
            guard inet_pton(AF_INET, ip, &a.sin_addr) == 1 else { return nil }
            withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &s) { $0.copyMemory(from: src) } }
        }
        storage = s
    }

    /// Parses "HOST:PORT" or "[V6HOST]:PORT".
    package init?(hostAndPort: String) {
        let host: Substring, port: Substring
        if hostAndPort.hasPrefix("["), let close = hostAndPort.firstIndex(of: "]") {
            host = hostAndPort[hostAndPort.index(after: hostAndPort.startIndex)..<close]
            let rest = hostAndPort[hostAndPort.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            port = rest.dropFirst()
        } else {
            guard let colon = hostAndPort.lastIndex(of: ":") else { return nil }
            host = hostAndPort[..<colon]
            port = hostAndPort[hostAndPort.index(after: colon)...]
        }
        guard let p = UInt16(port) else { return nil }
        self.init(ip: String(host), port: p)
    }

    package var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            family == .v4
                ? UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
                : UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
        }
    }

    /// The address bytes in network order: 4 for IPv4, 16 for IPv6.
    package var ipBytes: [UInt8] {
        withUnsafeBytes(of: storage) { raw in
            if family == .v4 {
                return withUnsafeBytes(of: raw.load(as: sockaddr_in.self).sin_addr) { Array($0) }
            }
            return withUnsafeBytes(of: raw.load(as: sockaddr_in6.self).sin6_addr) { Array($0) }
        }
    }

    package var ip: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let bytes = ipBytes
        bytes.withUnsafeBytes { src in
            _ = inet_ntop(family == .v4 ? AF_INET : AF_INET6, src.baseAddress, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package var description: String { family == .v4 ? "\(ip):\(port)" : "[\(ip)]:\(port)" }

    package static func == (a: SocketAddress, b: SocketAddress) -> Bool {
        a.transportAddress == b.transportAddress
    }

    package func hash(into h: inout Hasher) { h.combine(transportAddress) }

    /// The inline, protocol-neutral form of this address; no allocation.
    package var transportAddress: TransportAddress {
        withUnsafeBytes(of: storage) { raw in
            if family == .v4 {
                let a = raw.load(as: sockaddr_in.self)
                return TransportAddress(ipv4: UInt32(bigEndian: a.sin_addr.s_addr), port: UInt16(bigEndian: a.sin_port))
            }
            let a = raw.load(as: sockaddr_in6.self)
            return withUnsafeBytes(of: a.sin6_addr) { b in
                let high = UInt64(bigEndian: b.loadUnaligned(as: UInt64.self))
                let low = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                let port = UInt16(bigEndian: a.sin6_port)
                // ::ffff:a.b.c.d (RFC 4291 section 2.5.5.2) is how a
                // dual-stack socket shows an IPv4 peer: it is that IPv4
                // address, so ICE, STUN and the router see one form only.
                if high == 0, low >> 32 == 0xFFFF { return TransportAddress(ipv4: UInt32(truncatingIfNeeded: low), port: port) }
                return TransportAddress(ipv6: high, low, port: port)
            }
        }
    }

    /// `address` for a dual-stack socket (`mappedToIPv6`): an IPv4 address
    /// becomes ::ffff:a.b.c.d, the form an AF_INET6 socket sends to.
    package init(_ address: TransportAddress, mappedToIPv6: Bool) {
        guard mappedToIPv6, let v4 = address.ipv4 else {
            self.init(address)
            return
        }
        self.init(TransportAddress(ipv6: 0, 0xFFFF_0000_0000 | UInt64(v4), port: address.port))
    }

    /// 0.0.0.0 or :: (any port): a socket bound here receives on every
    /// local address, so its datagrams need their destination read
    /// (IP_PKTINFO) and its replies a chosen source.
    package var isWildcard: Bool { ipBytes.allSatisfy { $0 == 0 } }

    package init(_ address: TransportAddress) {
        var s = sockaddr_storage()
        if let v4 = address.ipv4 {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = address.port.bigEndian
            a.sin_addr.s_addr = v4.bigEndian
            withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &s) { $0.copyMemory(from: src) } }
        } else {
            let (high, low) = address.ipv6 ?? (0, 0)
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = address.port.bigEndian
            withUnsafeMutableBytes(of: &a.sin6_addr) { b in
                b.storeBytes(of: high.bigEndian, as: UInt64.self)
                b.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            withUnsafeBytes(of: a) { src in withUnsafeMutableBytes(of: &s) { $0.copyMemory(from: src) } }
        }
        storage = s
    }
}
