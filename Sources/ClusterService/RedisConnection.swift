import Cluster
import NetIO
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Why a call to Redis failed. Each closes the connection; the owner
/// reconnects on its next attempt.
package enum RedisConnectionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Could not resolve or connect (refused, unreachable, timed out).
    case unreachable(String)
    /// No reply within the command timeout.
    case timedOut
    /// The connection closed or failed mid-call.
    case closed(String)
    case protocolError(RedisProtocolError)

    package var description: String {
        switch self {
        case .unreachable(let why): "redis unreachable: \(why)"
        case .timedOut: "redis did not answer in time"
        case .closed(let why): "redis connection closed: \(why)"
        case .protocolError(let e): "redis protocol error: \(e)"
        }
    }
}

/// One connection to Redis for the cluster's control plane: blocking calls
/// bounded by a timeout (`poll(2)` on a non-blocking socket), TCP or a Unix
/// socket. Never used from a media worker: the cluster agent has its own
/// thread, and signalling waits on it only within the timeout.
package final class RedisConnection {
    package let endpoint: RedisEndpoint
    package let timeout: Duration
    private var descriptor: Int32 = -1
    private var reader: RedisReplyReader
    private var receiveBuffer = [UInt8](repeating: 0, count: 16 * 1024)

    package init(endpoint: RedisEndpoint, timeout: Duration) throws(RedisConnectionError) {
        self.endpoint = endpoint
        self.timeout = timeout
        do { reader = try RedisReplyReader() } catch { throw .protocolError(error) }
    }

    deinit { close() }

    package var isConnected: Bool { descriptor >= 0 }

    package func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// One command and its reply (`.error` replies are returned, not thrown:
    /// they are Redis's answer, the connection is fine).
    package func call(_ arguments: [String]) throws(RedisConnectionError) -> RedisValue {
        try pipeline([arguments])[0]
    }

    /// Several commands written at once and their replies in order.
    package func pipeline(_ commands: [[String]]) throws(RedisConnectionError) -> [RedisValue] {
        let deadline = MonotonicClock.now() + timeout
        if descriptor < 0 { try connect(deadline: deadline) }
        do {
            var bytes: [UInt8] = []
            for c in commands { bytes += RedisCommand.encode(c) }
            try write(bytes, deadline: deadline)
            var replies: [RedisValue] = []
            replies.reserveCapacity(commands.count)
            while replies.count < commands.count {
                if let value = try next() {
                    replies.append(value)
                    continue
                }
                try read(deadline: deadline)
            }
            return replies
        } catch {
            close()
            throw error
        }
    }

    /// The next value the server sends unasked (a subscribed connection's
    /// messages, RESP2 pub/sub), or nil when none came by `deadline`: a
    /// quiet channel is not an error.
    package func nextPush(until deadline: Instant) throws(RedisConnectionError) -> RedisValue? {
        guard descriptor >= 0 else { throw .closed("not connected") }
        do {
            while true {
                if let value = try next() { return value }
                guard wait(descriptor, for: Int16(POLLIN), deadline: deadline) else { return nil }
                do throws(RedisConnectionError) {
                    try read(deadline: deadline)
                } catch .timedOut {
                    return nil
                }
            }
        } catch {
            close()
            throw error
        }
    }

    private func next() throws(RedisConnectionError) -> RedisValue? {
        do { return try reader.next() } catch { throw .protocolError(error) }
    }

    private func connect(deadline: Instant) throws(RedisConnectionError) {
        do { reader = try RedisReplyReader() } catch { throw .protocolError(error) }
        switch endpoint {
        case .tcp(let host, let port):
            let addresses: [SocketAddress]
            do { addresses = try SocketAddress.resolve(host: host, port: port) } catch {
                throw .unreachable(error.description)
            }
            var last = "no address for \(host)"
            for address in addresses {
                let fd = socket(address.family == .v4 ? AF_INET : AF_INET6, Self.streamType, 0)
                guard fd >= 0 else { continue }
                var storage = address.storage
                let rc = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
                }
                if let why = finishConnect(fd, rc: rc, errno: errno, deadline: deadline) {
                    last = "\(address): \(why)"
                    Glibc.close(fd)
                    continue
                }
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                descriptor = fd
                return
            }
            throw .unreachable(last)
        case .unix(let path):
            let fd = socket(AF_UNIX, Self.streamType, 0)
            guard fd >= 0 else { throw .unreachable("socket: errno \(errno)") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, b) in bytes.prefix(raw.count - 1).enumerated() { raw[i] = b }
            }
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if let why = finishConnect(fd, rc: rc, errno: errno, deadline: deadline) {
                Glibc.close(fd)
                throw .unreachable("\(path): \(why)")
            }
            descriptor = fd
        }
    }

    private static let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)

    /// Nil when connected; else why not.
    private func finishConnect(_ fd: Int32, rc: Int32, errno e: Int32, deadline: Instant) -> String? {
        if rc == 0 { return nil }
        guard e == EINPROGRESS || e == EINTR || e == EAGAIN else { return String(cString: strerror(e)) }
        guard wait(fd, for: Int16(POLLOUT), deadline: deadline) else { return "timed out" }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error == 0 ? nil : String(cString: strerror(error))
    }

    /// Waits until `fd` is ready for `events` or the deadline passes.
    private func wait(_ fd: Int32, for events: Int16, deadline: Instant) -> Bool {
        while true {
            let left = deadline.nanoseconds - MonotonicClock.now().nanoseconds
            guard left > 0 else { return false }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let n = poll(&p, 1, Int32(clamping: (left + 999_999) / 1_000_000))
            if n > 0 { return true }
            if n < 0 && errno != EINTR { return true }  // the next call reports the error
        }
    }

    private func write(_ bytes: [UInt8], deadline: Instant) throws(RedisConnectionError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return send(descriptor, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                offset += n
                continue
            }
            let e = errno
            guard n < 0, e == EAGAIN || e == EINTR else { throw .closed(String(cString: strerror(e))) }
            guard wait(descriptor, for: Int16(POLLOUT), deadline: deadline) else { throw .timedOut }
        }
    }

    private func read(deadline: Instant) throws(RedisConnectionError) {
        while true {
            let n = receiveBuffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                var failure: RedisProtocolError?
                receiveBuffer.withUnsafeBytes { raw in
                    do throws(RedisProtocolError) { try reader.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) } catch {
                        failure = error
                    }
                }
                if let failure { throw .protocolError(failure) }
                return
            }
            if n == 0 { throw .closed("end of stream") }
            let e = errno
            guard e == EAGAIN || e == EINTR else { throw .closed(String(cString: strerror(e))) }
            guard wait(descriptor, for: Int16(POLLIN), deadline: deadline) else { throw .timedOut }
        }
    }
}
