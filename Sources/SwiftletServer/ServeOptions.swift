import NetIO

/// The options of `swiftlet serve`, parsed and validated before anything
/// starts, so that a typo is an error message rather than a half-started
/// server.
struct ServeOptions: Equatable {
    var httpAddress = SocketAddress(ip: "127.0.0.1", port: 8080)!
    var udpPort: UInt16 = 10000
    var workers = 0  // 0: one per core
    /// The media address written in ICE candidates (a public address
    /// behind NAT); nil: the bound address.
    var announcedIP: String?
    /// How long SIGTERM waits for sessions to end.
    var drainSeconds: Int64 = 30
    var dev = false
    var configPath: String?
    /// API key and secret for access tokens: `devkey`/`devsecret` in dev
    /// mode, otherwise from SWIFTLET_API_KEY / SWIFTLET_API_SECRET.
    var apiKey = ""
    var apiSecret = ""

    static let devKey = "devkey"
    static let devSecret = "devsecret"

    /// Dev mode listens on loopback only.
    var mediaBindIP: String { dev ? "127.0.0.1" : "0.0.0.0" }

    struct Invalid: Error, CustomStringConvertible { let description: String }

    static func parse(_ arguments: [String], environment: [String: String] = [:]) throws(Invalid) -> ServeOptions {
        var o = ServeOptions()
        var i = 0
        func value(_ name: String) throws(Invalid) -> String {
            i += 1
            guard i < arguments.count else { throw Invalid(description: "\(name) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            let a = arguments[i]
            switch a {
            case "--dev": o.dev = true
            case "--config": o.configPath = try value(a)
            case "--announce-ip":
                let v = try value(a)
                guard SocketAddress(ip: v, port: 1) != nil else {
                    throw Invalid(description: "--announce-ip wants a numeric IPv4 or IPv6 address, got '\(v)'")
                }
                o.announcedIP = v
            case "--drain-seconds":
                let v = try value(a)
                guard let n = Int64(v), n >= 0, n <= 3600 else {
                    throw Invalid(description: "--drain-seconds wants 0...3600, got '\(v)'")
                }
                o.drainSeconds = n
            case "--http":
                let v = try value(a)
                guard let address = SocketAddress(hostAndPort: v) else {
                    throw Invalid(description: "--http wants HOST:PORT with a numeric host, got '\(v)'")
                }
                o.httpAddress = address
            case "--udp-port":
                let v = try value(a)
                // 0: every worker takes any free port (tests).
                guard let p = UInt16(v) else { throw Invalid(description: "--udp-port wants 0...65535, got '\(v)'") }
                o.udpPort = p
            case "--workers":
                let v = try value(a)
                guard let n = Int(v), n >= 1, n <= 256 else { throw Invalid(description: "--workers wants 1...256, got '\(v)'") }
                o.workers = n
            default:
                throw Invalid(description: "unknown option '\(a)'; see swiftlet --help")
            }
            i += 1
        }
        if o.configPath != nil {
            throw Invalid(
                description: "--config: configuration files arrive with room signalling; use the flags and environment for now")
        }
        if o.workers > 0, o.udpPort > 0, Int(o.udpPort) + o.workers - 1 > 65535 {
            throw Invalid(description: "--udp-port \(o.udpPort) with \(o.workers) workers runs past port 65535")
        }
        if o.dev {
            o.apiKey = Self.devKey
            o.apiSecret = Self.devSecret
        } else {
            guard let key = environment["SWIFTLET_API_KEY"], !key.isEmpty,
                let secret = environment["SWIFTLET_API_SECRET"], !secret.isEmpty
            else {
                throw Invalid(
                    description:
                        "without --dev, set SWIFTLET_API_KEY and SWIFTLET_API_SECRET (or use --dev on a development machine)")
            }
            o.apiKey = key
            o.apiSecret = secret
        }
        return o
    }
}
