import CShim
import Wire

#if canImport(Glibc)
    import Glibc
#endif

package struct SocketError: Error, CustomStringConvertible {
    package let operation: String
    package let errno: Int32
    package init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }
    package var description: String { "\(operation): \(String(cString: strerror(errno)))" }
}

/// One UDP socket, owned by exactly one value and closed when it goes away.
/// Receives and sends in batches (`recvmmsg`/`sendmmsg`). A worker thread
/// owns its socket; nothing here locks.
///
/// Bound to a wildcard, one socket serves every local address, and the
/// kernel would answer from whichever address its routing prefers, not
/// the one the peer wrote to; ICE then fails, since a response must come
/// from where the request went (RFC 8445 section 7.2.5.2.1). So a wildcard
/// socket reads each datagram's destination (IP_PKTINFO / IPV6_RECVPKTINFO)
/// into the batch, and sends each slot from the source set on it.
/// `::` is dual-stack (IPV6_V6ONLY off): one socket and one port for both
/// families, with IPv4 peers seen as ::ffff:a.b.c.d on the wire and as
/// plain IPv4 above this type. One socket rather than one per family
/// keeps a worker to one descriptor, one epoll source and one transmit
/// queue; `0.0.0.0` stays IPv4 only.
package struct UDPSocket: ~Copyable {
    package let descriptor: Int32
    /// Bound to 0.0.0.0 or ::: datagrams carry their local address.
    package let reportsLocalAddresses: Bool
    /// Bound to ::, taking IPv4 as well.
    package let isDualStack: Bool

    /// Binds to `address` (port 0 picks a free port). `reusePort` lets
    /// several workers bind the same port (SO_REUSEPORT).
    package init(bindingTo address: SocketAddress, reusePort: Bool = false) throws(SocketError) {
        let wildcard = address.isWildcard
        let dualStack = wildcard && address.family == .v6
        let fd = try BoundSocket.open(
            address, type: Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), options: reusePort ? [SO_REUSEPORT] : [],
            dualStack: dualStack)
        // On a dual-stack socket IPV6_RECVPKTINFO reports IPv4 arrivals too,
        // as ::ffff:a.b.c.d (ipv6(7)).
        if wildcard, swiftlet_enable_pktinfo(fd, address.family == .v6 ? 1 : 0) != 0 {
            let e = errno
            close(fd)
            throw SocketError(operation: "IP_PKTINFO", errno: e)
        }
        descriptor = fd
        reportsLocalAddresses = wildcard
        isDualStack = dualStack
    }

    deinit { close(descriptor) }

    package func localAddress() throws(SocketError) -> SocketAddress {
        try BoundSocket.localAddress(of: descriptor)
    }

    /// Blocks at most `timeout` in receive calls (nil: forever).
    package func setReceiveTimeout(_ timeout: Duration?) {
        let ns = timeout?.nanoseconds ?? 0
        var tv = timeval(tv_sec: Int(ns / 1_000_000_000), tv_usec: Int(ns % 1_000_000_000 / 1000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    package func setNonBlocking() {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
    }

    /// Fills `batch` with up to `batch.capacity` datagrams; returns how many.
    /// Returns 0 when nothing is there (non-blocking) or the timeout passed.
    /// A datagram longer than a slot is truncated by the kernel and dropped here.
    package func receive(into batch: DatagramBatch) throws(SocketError) -> Int {
        batch.prepareReceiveHeaders(localAddresses: reportsLocalAddresses)
        // MSG_WAITFORONE: block (up to the receive timeout) for the first datagram
        // only, then take what is already queued; otherwise recvmmsg waits
        // to fill the whole batch.
        let n = swiftlet_recvmmsg(descriptor, batch.headers, UInt32(batch.capacity), Int32(MSG_WAITFORONE))
        if n < 0 {
            let e = errno
            if e == EAGAIN || e == EWOULDBLOCK || e == EINTR { batch.count = 0; return 0 }
            throw SocketError(operation: "recvmmsg", errno: e)
        }
        for i in 0..<Int(n) {
            batch.lengths[i] = Int(swiftlet_mmsghdr_length(batch.headers, UInt32(i)))
        }
        batch.readLocalAddresses(count: Int(n), enabled: reportsLocalAddresses)
        batch.count = Int(n)
        return Int(n)
    }

    /// Sends the first `batch.count` slots to their addresses (from their
    /// local addresses, where set on a wildcard socket) and empties the
    /// batch; returns how many the kernel took. One datagram a message:
    /// grouping belongs to the worker's `TransmitQueue`.
    @discardableResult
    package func send(_ batch: DatagramBatch) -> Int {
        var plain = UDPSegmentation(enabled: false)
        return batch.transmit(
            on: descriptor, mapIPv4: isDualStack, localAddresses: reportsLocalAddresses, segmentation: &plain
        ).sent
    }
}
