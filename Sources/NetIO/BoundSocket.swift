#if canImport(Glibc)
    import Glibc
#endif

/// Opening and naming a bound socket: shared by `UDPSocket` and
/// `TCPListener`, which differ only in type and socket options.
enum BoundSocket {
    /// A socket of `type` (SOCK_DGRAM or SOCK_STREAM, with flags) bound to
    /// `address`, with each SOL_SOCKET option of `options` set to 1. An
    /// IPv6 address binds IPv6 only (IPV6_V6ONLY): one family per socket,
    /// so a v4-mapped address never shows up as a peer; `dualStack` (for
    /// `::` only) lets one socket take both families instead. The
    /// descriptor is closed when anything fails.
    static func open(
        _ address: SocketAddress, type: Int32, options: [Int32] = [], dualStack: Bool = false
    ) throws(SocketError) -> Int32 {
        let fd = socket(address.family == .v4 ? AF_INET : AF_INET6, type, 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", errno: errno) }
        var one: Int32 = 1
        for option in options { setsockopt(fd, SOL_SOCKET, option, &one, socklen_t(MemoryLayout<Int32>.size)) }
        if address.family == .v6 {
            var v6only: Int32 = dualStack ? 0 : 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &v6only, socklen_t(MemoryLayout<Int32>.size))
        }
        var storage = address.storage
        let rc = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.length) }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw SocketError(operation: "bind \(address)", errno: e)
        }
        return fd
    }

    /// The address `fd` is bound to (the port the kernel chose for port 0).
    static func localAddress(of fd: Int32) throws(SocketError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0, let address = SocketAddress(storage: storage) else {
            throw SocketError(operation: "getsockname", errno: errno)
        }
        return address
    }
}
