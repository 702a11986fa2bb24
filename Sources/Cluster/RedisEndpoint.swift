/// Where the cluster's Redis is: `redis://host:port` (port 6379 when
/// omitted) or `unix:/path/to/redis.sock` (`--redis`, or `redis` in the
/// config file).
package enum RedisEndpoint: Equatable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: UInt16)
    case unix(path: String)

    package static let defaultPort: UInt16 = 6379

    package init(url: String) throws(ClusterConfigurationError) {
        if url.hasPrefix("unix:") {
            let path = String(url.dropFirst("unix:".count))
            // sun_path holds 108 bytes with its terminating NUL (unix(7)).
            guard path.hasPrefix("/"), path.utf8.count < 108 else { throw .badRedisURL(url) }
            self = .unix(path: path)
            return
        }
        guard url.hasPrefix("redis://") else { throw .badRedisURL(url) }
        var rest = Substring(url.dropFirst("redis://".count))
        if let slash = rest.firstIndex(of: "/") {
            // A database number (`/0`) is all a path could say; only 0 is used.
            guard rest[slash...] == "/" || rest[slash...] == "/0" else { throw .badRedisURL(url) }
            rest = rest[..<slash]
        }
        guard !rest.contains("@") else { throw .badRedisURL(url) }  // credentials: not supported yet
        var host = rest
        var port = Self.defaultPort
        if rest.hasPrefix("[") {
            // [IPv6]:port
            guard let close = rest.firstIndex(of: "]") else { throw .badRedisURL(url) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = UInt16(after.dropFirst()), p > 0 else { throw .badRedisURL(url) }
                port = p
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let p = UInt16(rest[rest.index(after: colon)...]), p > 0 else { throw .badRedisURL(url) }
            host = rest[..<colon]
            port = p
        }
        guard !host.isEmpty else { throw .badRedisURL(url) }
        self = .tcp(host: String(host), port: port)
    }

    package var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "redis://[\(host)]:\(port)" : "redis://\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}

/// A cluster setting that cannot be used.
package enum ClusterConfigurationError: Error, Equatable, Sendable {
    case badRedisURL(String)
}
