import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// One address of one network interface, as getifaddrs(3) lists it.
package struct InterfaceAddress: Equatable, Sendable, CustomStringConvertible {
    package var name: String
    /// The address, port 0.
    package var address: TransportAddress
    /// IFF_UP: the administrator brought the interface up.
    package var isUp: Bool
    package init(name: String, address: TransportAddress, isUp: Bool = true) {
        self.name = name
        self.address = address
        self.isUp = isUp
    }
    package var description: String { "\(name) \(address)\(isUp ? "" : " (down)")" }
}

/// The machine's interface addresses, read once at start: what a
/// wildcard-bound media socket can be reached on.
package enum NetworkInterfaces {
    /// Every IPv4 and IPv6 address of every interface, in the kernel's
    /// order (empty if getifaddrs fails). Interfaces that come and go
    /// later are not followed.
    package static func current() -> [InterfaceAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var result: [InterfaceAddress] = []
        var next: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = next {
            defer { next = entry.pointee.ifa_next }
            guard let sa = entry.pointee.ifa_addr else { continue }
            let family = Int32(sa.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var storage = sockaddr_storage()
            let size = family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: sa, count: size)) }
            guard let address = SocketAddress(storage: storage) else { continue }
            var transport = address.transportAddress
            transport.port = 0
            result.append(
                InterfaceAddress(
                    name: String(cString: entry.pointee.ifa_name), address: transport,
                    isUp: entry.pointee.ifa_flags & UInt32(IFF_UP) != 0))
        }
        return result
    }
}
