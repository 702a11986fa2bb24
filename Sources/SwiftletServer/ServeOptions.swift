import Foundation
import NetIO

/// The options of `swiftlet serve`, parsed and validated before anything
/// starts, so that a typo is an error message rather than a half-started
/// server. Sources, later ones winning: defaults, the `--config` file, the
/// flags. API keys come from the config file and the environment
/// (SWIFTLET_API_KEY / SWIFTLET_API_SECRET); `--dev` uses `devkey` /
/// `devsecret` and loopback addresses.
struct ServeOptions: Equatable {
    var httpAddress = SocketAddress(ip: "127.0.0.1", port: 8080)!
    var udpPort: UInt16 = 10000
    var workers = 0  // 0: one per core
    /// Where the media sockets bind: an IPv4 or IPv6 address; nil: 0.0.0.0,
    /// or 127.0.0.1 in dev mode.
    var mediaBindIP: String?
    /// The media address written in ICE candidates (a public address
    /// behind NAT); nil: the bound address.
    var announcedIP: String?
    /// How long SIGTERM waits for sessions to end.
    var drainSeconds: Int64 = 30
    var dev = false
    var configPath: String?
    /// API keys and their secrets for access tokens.
    var keys: [String: String] = [:]
    /// PEM files for HTTPS/WSS: the certificate chain (leaf first) and its
    /// key. With them a second listener serves TLS on `httpsAddress`;
    /// SIGHUP re-reads both.
    var tlsCertPath: String?
    var tlsKeyPath: String?
    /// `--dev --tls`: serve TLS with a generated self-signed certificate.
    var devTLS = false
    /// The TLS listener; nil: 0.0.0.0:8443, or 127.0.0.1:8443 in dev mode.
    var httpsAddressSetting: SocketAddress?

    static let devKey = "devkey"
    static let devSecret = "devsecret"

    var mediaBind: String { mediaBindIP ?? (dev ? "127.0.0.1" : "0.0.0.0") }
    var httpsAddress: SocketAddress {
        httpsAddressSetting ?? SocketAddress(ip: dev ? "127.0.0.1" : "0.0.0.0", port: 8443)!
    }
    /// Whether a TLS listener runs.
    var servesTLS: Bool { tlsCertPath != nil || devTLS }

    struct Invalid: Error, CustomStringConvertible { let description: String }

    /// The config file (JSON); every field optional.
    struct ConfigFile: Decodable {
        var http: String?
        var udpPort: UInt16?
        var workers: Int?
        var mediaBind: String?
        var announceIP: String?
        var drainSeconds: Int64?
        var keys: [String: String]?
        var tls: TLSFiles?
        var https: String?
    }

    /// `"tls": {"cert": PATH, "key": PATH}`.
    struct TLSFiles: Decodable {
        var cert: String
        var key: String
    }

    static func parse(
        _ arguments: [String], environment: [String: String] = [:],
        readFile: (String) throws -> Data = { try Data(contentsOf: URL(fileURLWithPath: $0)) }
    ) throws(Invalid) -> ServeOptions {
        var o = ServeOptions()
        // The config file first, so that flags override it.
        if let index = arguments.firstIndex(of: "--config") {
            guard index + 1 < arguments.count else { throw Invalid(description: "--config needs a value") }
            let path = arguments[index + 1]
            o.configPath = path
            let data: Data
            do { data = try readFile(path) } catch {
                throw Invalid(description: "--config \(path): \(error.localizedDescription)")
            }
            let file: ConfigFile
            do { file = try JSONDecoder().decode(ConfigFile.self, from: data) } catch {
                throw Invalid(description: "--config \(path): not a valid config file: \(error)")
            }
            try o.apply(file)
        }
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
            case "--config": _ = try value(a)  // read above
            case "--http": try o.setHTTP(try value(a))
            case "--udp-port":
                let v = try value(a)
                // 0: every worker takes any free port (tests).
                guard let p = UInt16(v) else { throw Invalid(description: "--udp-port wants 0...65535, got '\(v)'") }
                o.udpPort = p
            case "--workers": try o.setWorkers(Int(try value(a)), text: arguments[i])
            case "--media-bind": o.mediaBindIP = try Self.ip(try value(a), flag: a)
            case "--announce-ip": o.announcedIP = try Self.ip(try value(a), flag: a)
            case "--drain-seconds": try o.setDrain(Int64(try value(a)), text: arguments[i])
            case "--tls": o.devTLS = true
            case "--tls-cert": o.tlsCertPath = try value(a)
            case "--tls-key": o.tlsKeyPath = try value(a)
            case "--https": try o.setHTTPS(try value(a))
            default:
                throw Invalid(description: "unknown option '\(a)'; see swiftlet --help")
            }
            i += 1
        }
        if o.workers > 0, o.udpPort > 0, Int(o.udpPort) + o.workers - 1 > 65535 {
            throw Invalid(description: "--udp-port \(o.udpPort) with \(o.workers) workers runs past port 65535")
        }
        guard (o.tlsCertPath == nil) == (o.tlsKeyPath == nil) else {
            throw Invalid(
                description: "TLS needs both a certificate and a key (--tls-cert and --tls-key, or \"tls\" in the config)")
        }
        if o.devTLS, !o.dev, o.tlsCertPath == nil {
            throw Invalid(
                description: "--tls alone generates a self-signed certificate, for --dev only; give --tls-cert and --tls-key")
        }
        if o.dev {
            // Dev mode hands a signed token to anyone who asks (the page's
            // /dev/token): it must not be reachable beyond this machine.
            for (flag, address) in [("--http", o.httpAddress), ("--https", o.httpsAddress)] {
                let ip = address.ipBytes
                let loopback = (ip.count == 4 && ip[0] == 127) || (ip.count == 16 && ip == Array(repeating: 0, count: 15) + [1])
                guard loopback || (flag == "--https" && !o.servesTLS) else {
                    throw Invalid(
                        description:
                            "--dev mints tokens for anyone who can reach \(flag), so it listens on loopback only "
                            + "(127.0.0.1 or [::1]), not \(address.ip); use API keys to serve other machines")
                }
            }
            o.keys[Self.devKey] = Self.devSecret
        } else {
            if let key = environment["SWIFTLET_API_KEY"], !key.isEmpty, let secret = environment["SWIFTLET_API_SECRET"],
                !secret.isEmpty
            {
                o.keys[key] = secret
            }
            guard !o.keys.isEmpty else {
                throw Invalid(
                    description:
                        "without --dev, give API keys: \"keys\" in the --config file, or SWIFTLET_API_KEY and SWIFTLET_API_SECRET"
                )
            }
            if let weak = o.keys.first(where: { $0.value.utf8.count < 16 }) {
                throw Invalid(
                    description: "the secret of API key '\(weak.key)' is shorter than 16 bytes; HS256 wants a long random secret")
            }
        }
        return o
    }

    private mutating func apply(_ file: ConfigFile) throws(Invalid) {
        if let http = file.http { try setHTTP(http) }
        if let port = file.udpPort { udpPort = port }
        if let workers = file.workers { try setWorkers(workers, text: String(workers)) }
        if let bind = file.mediaBind { mediaBindIP = try Self.ip(bind, flag: "mediaBind") }
        if let announce = file.announceIP { announcedIP = try Self.ip(announce, flag: "announceIP") }
        if let drain = file.drainSeconds { try setDrain(drain, text: String(drain)) }
        if let keys = file.keys { self.keys.merge(keys) { _, new in new } }
        if let tls = file.tls {
            tlsCertPath = tls.cert
            tlsKeyPath = tls.key
        }
        if let https = file.https { try setHTTPS(https) }
    }

    private mutating func setHTTPS(_ v: String) throws(Invalid) {
        guard let address = SocketAddress(hostAndPort: v) else {
            throw Invalid(description: "--https wants HOST:PORT with a numeric host ([::1]:8443 for IPv6), got '\(v)'")
        }
        httpsAddressSetting = address
    }

    private mutating func setHTTP(_ v: String) throws(Invalid) {
        guard let address = SocketAddress(hostAndPort: v) else {
            throw Invalid(description: "--http wants HOST:PORT with a numeric host ([::1]:8080 for IPv6), got '\(v)'")
        }
        httpAddress = address
    }

    private mutating func setWorkers(_ n: Int?, text: String) throws(Invalid) {
        guard let n, n >= 1, n <= 256 else { throw Invalid(description: "--workers wants 1...256, got '\(text)'") }
        workers = n
    }

    private mutating func setDrain(_ n: Int64?, text: String) throws(Invalid) {
        guard let n, n >= 0, n <= 3600 else { throw Invalid(description: "--drain-seconds wants 0...3600, got '\(text)'") }
        drainSeconds = n
    }

    private static func ip(_ v: String, flag: String) throws(Invalid) -> String {
        guard SocketAddress(ip: v, port: 1) != nil else {
            throw Invalid(description: "\(flag) wants a numeric IPv4 or IPv6 address, got '\(v)'")
        }
        return v
    }
}
