import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP proxy on 127.0.0.1 (port 0: the kernel's choice) in front of
/// `upstreamPort` on 127.0.0.1, for dropping a client's connections for
/// real: `cut()` closes every connection it carries, both sides, with no
/// WebSocket close frame (the server sees the TCP connection end, as on a
/// network blip); connections made after the cut are carried as before.
/// One thread polls every socket every 20 ms at most; it stops at `stop()`
/// or after `lifetime`, whichever comes first.
final class CuttableTCPProxy: @unchecked Sendable {
    struct SetupError: Error, CustomStringConvertible { let description: String }

    /// Where clients connect.
    let port: UInt16
    private let upstreamPort: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var cutsRequested = 0
    private var stopRequested = false
    private var carried = 0
    private var cutCount = 0
    private var thread: Thread?

    init(upstreamPort: UInt16, lifetime: TimeInterval = 60) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError(description: "socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound, listen(fd, 16) == 0 else {
            close(fd)
            throw SetupError(description: "bind/listen on 127.0.0.1: errno \(errno)")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let end = Date().addingTimeInterval(lifetime)
        let thread = Thread { [self] in run(until: end) }
        self.thread = thread
        thread.start()
    }

    /// Connections accepted so far, and connections closed by `cut()`.
    var counts: (carried: Int, cut: Int) { lock.withLock { (carried, cutCount) } }

    /// Closes every connection carried now (at the thread's next round,
    /// within 20 ms).
    func cut() { lock.withLock { cutsRequested += 1 } }

    func stop() { lock.withLock { stopRequested = true } }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    /// A blocking connect to the upstream on loopback (answered at once).
    private func connectUpstream() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = Self.loopback(port: upstreamPort)
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        if !ok { close(fd) }
        return ok ? fd : nil
    }

    /// Writes all of `count` bytes (loopback, small messages: a blocking
    /// socket takes them); false when the peer is gone.
    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Bool {
        var sent = 0
        while sent < count {
            let n = send(fd, bytes + sent, count - sent, Int32(MSG_NOSIGNAL))
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    private func run(until end: Date) {
        // Each pair: client side and upstream side.
        var pairs: [(client: Int32, upstream: Int32)] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var cutsDone = 0
        defer {
            for p in pairs {
                close(p.client)
                close(p.upstream)
            }
            close(listener)
        }
        while Date() < end {
            let (cuts, stopping) = lock.withLock { (cutsRequested, stopRequested) }
            if stopping { return }
            if cuts > cutsDone {
                cutsDone = cuts
                for p in pairs {
                    close(p.client)
                    close(p.upstream)
                }
                lock.withLock { cutCount += pairs.count }
                pairs = []
            }
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for p in pairs {
                fds.append(pollfd(fd: p.client, events: Int16(POLLIN), revents: 0))
                fds.append(pollfd(fd: p.upstream, events: Int16(POLLIN), revents: 0))
            }
            guard poll(&fds, nfds_t(fds.count), 20) > 0 else { continue }
            var closed: Set<Int> = []
            for (i, p) in pairs.enumerated() {
                for (from, to, entry) in [(p.client, p.upstream, fds[1 + 2 * i]), (p.upstream, p.client, fds[2 + 2 * i])]
                where entry.revents != 0 && !closed.contains(i) {
                    let n = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                    let forwarded = n > 0 && buffer.withUnsafeBytes { Self.writeAll(to, $0.baseAddress!, n) }
                    if !forwarded { closed.insert(i) }
                }
            }
            for i in closed.sorted(by: >) {
                close(pairs[i].client)
                close(pairs[i].upstream)
                pairs.remove(at: i)
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                let client = accept(listener, nil, nil)
                if client >= 0 {
                    if let upstream = connectUpstream() {
                        pairs.append((client, upstream))
                        lock.withLock { carried += 1 }
                    } else {
                        close(client)
                    }
                }
            }
        }
    }
}
