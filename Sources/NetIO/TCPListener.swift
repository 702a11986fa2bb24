import CShim

#if canImport(Glibc)
    import Glibc
#endif

/// A listening TCP socket, owned by exactly one value and closed when it
/// goes away. Non-blocking: `accept()` returns nil when no connection waits,
/// so it lives in an epoll loop (see `TCPServer`).
package struct TCPListener: ~Copyable {
    package let descriptor: Int32
    /// The bound address; with port 0 at bind, the port the kernel chose.
    package let localAddress: SocketAddress

    /// Binds `address` (port 0 picks a free port) with SO_REUSEADDR, so a
    /// restarted server can bind while old connections sit in TIME_WAIT,
    /// and listens with `backlog` (the kernel caps it at somaxconn). An IPv6
    /// address listens for IPv6 only (IPV6_V6ONLY), unless `dualStack` (for
    /// `::`: IPv4 peers then appear v4-mapped).
    package init(bindingTo address: SocketAddress, backlog: Int32 = 511, dualStack: Bool = false) throws(SocketError) {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = try BoundSocket.open(address, type: type, options: [SO_REUSEADDR], dualStack: dualStack)
        guard listen(fd, backlog) == 0 else {
            let e = errno
            close(fd)
            throw SocketError(operation: "listen \(address)", errno: e)
        }
        let local: SocketAddress
        do {
            local = try BoundSocket.localAddress(of: fd)
        } catch {
            close(fd)
            throw error
        }
        descriptor = fd
        localAddress = local
    }

    deinit { close(descriptor) }

    /// The next waiting connection, non-blocking and close-on-exec; nil when
    /// none waits. A connection that died in the queue (ECONNABORTED) is
    /// skipped. Throws for resource exhaustion (EMFILE, ENFILE, ENOBUFS,
    /// ENOMEM), which leaves the listener readable: the caller must back off.
    package func accept() throws(SocketError) -> TCPStream? {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = swiftlet_tcp_accept(descriptor, &storage, &length)
            if fd >= 0 {
                // A peer address of another family cannot happen on an
                // AF_INET/AF_INET6 listener; keep the connection regardless.
                return TCPStream(descriptor: fd, peer: SocketAddress(storage: storage))
            }
            let e = errno
            switch e {
            case EAGAIN, EWOULDBLOCK: return nil
            case EINTR, ECONNABORTED, EPROTO, EPERM: continue
            default: throw SocketError(operation: "accept", errno: e)
            }
        }
    }
}

/// The outcome of one non-blocking read or write on a `TCPStream`.
package enum TCPTransfer: Equatable, Sendable {
    /// This many bytes moved (more than zero).
    case bytes(Int)
    /// The kernel buffer is empty (read) or full (write): wait for epoll.
    case wouldBlock
    /// The peer sent FIN: no more bytes will arrive (reads only).
    case endOfStream
    /// The connection failed (ECONNRESET, EPIPE, ETIMEDOUT...).
    case failed(errno: Int32)
}

/// One accepted TCP connection, owned by exactly one value and closed when
/// it goes away. Non-blocking; nothing here buffers or locks.
package struct TCPStream: ~Copyable {
    package let descriptor: Int32
    /// The remote end, as accept reported it.
    package let peer: SocketAddress?

    init(descriptor: Int32, peer: SocketAddress?) {
        self.descriptor = descriptor
        self.peer = peer
    }

    deinit { close(descriptor) }

    /// Disables Nagle's algorithm: signalling messages are small and
    /// latency-bound, and the shell already writes whole messages.
    package func setNoDelay(_ on: Bool = true) {
        _ = swiftlet_tcp_set_nodelay(descriptor, on ? 1 : 0)
    }

    /// Reads what is there, at most `buffer.count` (more than zero) bytes.
    package func receive(into buffer: UnsafeMutableRawBufferPointer) -> TCPTransfer {
        precondition(!buffer.isEmpty, "the receive buffer is ours, not the wire's")
        while true {
            let n = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .endOfStream }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return .wouldBlock }
            return .failed(errno: e)
        }
    }

    /// Writes what the kernel takes now; never raises SIGPIPE.
    package func send(_ bytes: UnsafeRawBufferPointer) -> TCPTransfer {
        guard !bytes.isEmpty else { return .bytes(0) }
        while true {
            let n = swiftlet_tcp_send(descriptor, bytes.baseAddress, bytes.count)
            if n > 0 { return .bytes(n) }
            let e = errno
            if n < 0 && e == EINTR { continue }
            if n < 0 && (e == EAGAIN || e == EWOULDBLOCK) { return .wouldBlock }
            return .failed(errno: n < 0 ? e : EPIPE)
        }
    }

    /// Sends FIN after the queued bytes; reads still work.
    package func shutdownWrite() {
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    /// The pending socket error (SO_ERROR), or 0.
    package var pendingError: Int32 { swiftlet_tcp_socket_error(descriptor) }
}
