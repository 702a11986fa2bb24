import NetIO
import Wire

#if canImport(Glibc)
    import Glibc
#endif

extension HTTPExchange {
    /// Drives the exchange with poll(2) on the calling thread until its
    /// outcome, `deadline`, or `keepGoing` turning false (checked at least
    /// every 200 ms): for a thread of its own (webhook delivery) or a
    /// command-line tool, never for an event loop.
    package func run(until deadline: Instant, keepGoing: () -> Bool = { true }) -> Outcome {
        while keepGoing() {
            let left = (deadline - MonotonicClock.now()).nanoseconds / 1_000_000
            guard left > 0 else { return .failed("no answer in time") }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN) | (wantsWritable ? Int16(POLLOUT) : 0), revents: 0)
            let ready = poll(&entry, 1, Int32(min(left, 200)))
            guard ready >= 0 || errno == EINTR else { return .failed("poll failed: \(errno)") }
            guard ready > 0 else { continue }
            let hangup = entry.revents & Int16(POLLHUP | POLLERR) != 0
            if let outcome = handleReady(
                readable: entry.revents & Int16(POLLIN) != 0, writable: entry.revents & Int16(POLLOUT) != 0, hangup: hangup)
            {
                return outcome
            }
        }
        return .failed("stopped")
    }
}

/// A plain `http://HOST[:PORT][/PATH]` URL (webhook receivers, the
/// `swiftlet rooms` CLI's server): HOST an IP literal or a name,
/// resolved when `endpoint()` is called. No TLS here.
package struct PlainHTTPURL: Equatable, Sendable {
    package var text: String
    package var host: String
    package var port: UInt16
    package var path: String

    package init?(_ url: String) {
        guard url.utf8.count <= 2048, url.lowercased().hasPrefix("http://") else { return nil }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let path = rest.dropFirst(authority.count)
        var host = Substring(authority)
        var port: UInt16 = 80
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                guard let p = UInt16(after.dropFirst()), p > 0 else { return nil }
                port = p
            } else if !after.isEmpty {
                return nil
            }
        } else if let colon = authority.lastIndex(of: ":") {
            guard let p = UInt16(authority[authority.index(after: colon)...]), p > 0 else { return nil }
            host = authority[..<colon]
            port = p
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace }),
            path.allSatisfy({ $0.isASCII && !$0.isWhitespace })
        else { return nil }
        text = url
        self.host = String(host)
        self.port = port
        self.path = path.isEmpty ? "/" : String(path)
    }

    /// The address to connect to (a name is resolved now, blocking), or nil.
    package func endpoint() -> ServerEndpoint? {
        let literal = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let address = SocketAddress(hostAndPort: literal) ?? (try? SocketAddress.resolve(host: host, port: port))?.first
        guard let address else { return nil }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return ServerEndpoint(
            address: address, hostHeader: port == 80 ? bracketed : "\(bracketed):\(port)", serverName: host, tls: nil)
    }
}
