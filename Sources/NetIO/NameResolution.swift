#if canImport(Glibc)
    import Glibc
#endif

/// A host name that did not resolve; `reason` is getaddrinfo's.
package struct NameResolutionError: Error, CustomStringConvertible {
    package let host: String
    package let reason: String
    package var description: String { "cannot resolve '\(host)': \(reason)" }
}

extension SocketAddress {
    /// The TCP addresses of `host` (a name or an IP literal), IPv4 and
    /// IPv6, in getaddrinfo's order (RFC 6724 destination address
    /// selection, as /etc/gai.conf tunes it). Blocks while the resolver
    /// works: call it before the loop starts.
    package static func resolve(host: String, port: UInt16) throws(NameResolutionError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0 else { throw NameResolutionError(host: host, reason: String(cString: gai_strerror(rc))) }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry = list
        // Bounded: a resolver answer is a short list.
        while let e = entry, addresses.count < 64 {
            if let address = e.pointee.ai_addr, Int(e.pointee.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size {
                var storage = sockaddr_storage()
                withUnsafeMutableBytes(of: &storage) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(e.pointee.ai_addrlen)))
                }
                if let a = SocketAddress(storage: storage), !addresses.contains(a) { addresses.append(a) }
            }
            entry = e.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw NameResolutionError(host: host, reason: "no IPv4 or IPv6 address") }
        return addresses
    }
}
