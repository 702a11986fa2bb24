import CShim

#if canImport(Glibc)
    import Glibc
#endif

/// Where a non-blocking connect stands.
package enum TCPConnectProgress: Equatable, Sendable {
    /// The handshake is under way: wait for the socket to become writable
    /// (epoll), then call `TCPClientSocket.finishConnect()`.
    case inProgress
    case connected
    case failed(errno: Int32)
}

/// An outgoing TCP connection (the client side; `TCPListener` is the
/// server side), opened non-blocking and close-on-exec. `connect` returns
/// at once; the socket becomes writable when the handshake ends, and
/// `finishConnect()` then says how it ended (SO_ERROR, as connect(2)
/// describes for EINPROGRESS). Once connected, `stream` reads and writes
/// like an accepted connection.
package struct TCPClientSocket: ~Copyable {
    package let stream: TCPStream
    package let remote: SocketAddress
    /// The state right after `connect(2)`: `.connected` happens on
    /// loopback at times, `.inProgress` is the rule.
    package let initialProgress: TCPConnectProgress

    package var descriptor: Int32 { stream.descriptor }

    /// Opens a socket of `remote`'s family and starts connecting. Throws
    /// only when the socket cannot be created or the connect fails at once
    /// (ECONNREFUSED on loopback may come either way).
    package init(connectingTo remote: SocketAddress) throws(SocketError) {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(remote.family == .v4 ? AF_INET : AF_INET6, type, 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", errno: errno) }
        var storage = remote.storage
        let rc = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, remote.length) }
        }
        let e = errno
        if rc == 0 {
            initialProgress = .connected
        } else if e == EINPROGRESS || e == EINTR {
            // EINTR: the connect goes on asynchronously (connect(2)).
            initialProgress = .inProgress
        } else {
            close(fd)
            throw SocketError(operation: "connect \(remote)", errno: e)
        }
        stream = TCPStream(descriptor: fd, peer: remote)
        self.remote = remote
        stream.setNoDelay()
    }

    /// After the socket turned writable (or hung up): whether the
    /// connection was established.
    package func finishConnect() -> TCPConnectProgress {
        let error = stream.pendingError
        if error != 0 { return error == EINPROGRESS || error == EALREADY ? .inProgress : .failed(errno: error) }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        if rc == 0 { return .connected }
        // ENOTCONN without SO_ERROR: still in progress.
        return errno == ENOTCONN ? .inProgress : .failed(errno: errno)
    }

    /// The local end the kernel chose.
    package func localAddress() throws(SocketError) -> SocketAddress {
        try BoundSocket.localAddress(of: descriptor)
    }
}
