import Cluster
import Foundation
import NetIO
import PeerSession
import RoomProtocol
import Rooms
import SRTP
import Signaling
import SignalingServer

/// The options of `swiftlet serve`, parsed and validated before anything
/// starts, so that a typo is an error message rather than a half-started
/// server. Every option is one row of `table` (flag, `SWIFTLET_*`
/// variable, config key, default, help); sources, later ones winning:
/// defaults, the `--config` file, the environment, the flags
/// (docs/CONFIGURATION.md). `--dev` uses `devkey` / `devsecret` and
/// loopback addresses.
struct ServeOptions: Equatable {
    var httpAddress = SocketAddress(ip: "127.0.0.1", port: 8080)!
    var udpPort: UInt16 = 10000
    /// ICE-TCP's first port (RFC 6544): nil: the UDP port numbers (TCP
    /// 10000... by default; any free ports with `--udp-port 0`); 0: any free
    /// ports; `iceTCP` false: off.
    var iceTCPPortSetting: UInt16?
    var iceTCP = true
    var workers = 0  // 0: one per core
    /// UDP GSO on media sends where the kernel has it (`--udp-gso`).
    var udpGSO = true
    /// The media sockets' kernel buffers (`--udp-receive-buffer`,
    /// `--udp-send-buffer`); a size of 0 keeps the kernel's default.
    var socketBuffers = UDPSocketBuffers.standard
    /// A room's participants share one media worker up to this many, then
    /// spread by load (`WorkerPlacement`); 0 or 1: every participant by load.
    var roomSpreadAfter = 8
    /// Where the media sockets bind: an IPv4 or IPv6 address; nil: ::
    /// (every address, both families), or 127.0.0.1 in dev mode.
    var mediaBindIP: String?
    /// The media address written in ICE candidates (a public address
    /// behind NAT); nil: the bound address.
    var announcedIP: String?
    /// Also announce IPv4 link-local addresses (169.254/16) of a wildcard
    /// bind.
    var announceLinkLocal = false
    /// How long SIGTERM waits for sessions to end.
    var drainSeconds: Int64 = 30
    /// Recording (docs/RECORDING.md): on when a directory is given.
    var recordDirectory: String?
    var recordRooms: [String] = []
    var recordMaxDuration: Duration = .seconds(4 * 3600)
    var recordMinFreeMB: Int64 = 512
    /// SSRCs a peer may send SRTP/SRTCP from per media transport
    /// (docs/SECURITY.md).
    var maxSSRCsPerTransport = PeerTransport.defaultMaxInboundSSRCs
    var srtpBackend = SRTPBackend.default
    var dev = false
    var configPath: String?
    /// API keys and their secrets for access tokens.
    var keys: [String: String] = [:]
    /// nil: `debug` in dev mode, `info` otherwise.
    var logLevel: ServerLog.Level?
    var logFormat = ServerLog.Format.text
    /// Origins the room WebSocket accepts; empty: any.
    var allowedOrigins: [String] = []
    /// Where webhook events go (docs/API.md); empty: none.
    var webhookURLs: [String] = []
    /// The API key that signs them; nil: the only key, or the first by name.
    var webhookKey: String?
    /// How long one event is retried before it is dropped.
    var webhookRetryFor: Duration = .seconds(30)
    /// Events waiting per URL at most.
    var webhookQueue = 1000
    /// PEM files for HTTPS/WSS: the certificate chain (leaf first) and its
    /// key. With them a second listener serves TLS on `httpsAddress`;
    /// SIGHUP re-reads both.
    var tlsCertPath: String?
    var tlsKeyPath: String?
    /// `--dev --tls`: serve TLS with a generated self-signed certificate.
    var devTLS = false
    /// The TLS listener; nil: 0.0.0.0:8443, or 127.0.0.1:8443 in dev mode.
    var httpsAddressSetting: SocketAddress?
    /// What one client may make the rooms hold (docs/SECURITY.md).
    var roomLimits = RoomLimits()
    /// Per-client limits of the signalling listener (docs/SECURITY.md).
    var connectionLimits = SignalingConnectionLimits()
    /// A room WebSocket must join within this.
    var joinTimeout: Duration = .seconds(10)
    /// The built-in TURN server (docs/TRANSPORT.md): off unless asked.
    var turn = false
    /// UDP and TCP port of TURN; TURN over TLS port (when TLS is on).
    var turnPort: UInt16 = 3478
    var turnTLSPort: UInt16 = 5349
    /// The host name written in TURN URLs (the certificate's name for
    /// turns:); nil: the relay's announced IP.
    var turnHost: String?
    /// Allocations on this node, and per credentials (docs/SECURITY.md).
    var turnAllocations = 1000
    var turnAllocationsPerUser = 8
    /// The cluster (`--redis`, docs/CLUSTER.md): nil runs alone.
    var redis: RedisEndpoint?
    var nodeName: String?
    var region: String?
    var nodeLimits = NodeLimits()

    static let devKey = "devkey"
    static let devSecret = "devsecret"

    var mediaBind: String { mediaBindIP ?? (dev ? "127.0.0.1" : "::") }
    var effectiveLogLevel: ServerLog.Level { logLevel ?? (dev ? .debug : .info) }
    var httpsAddress: SocketAddress {
        httpsAddressSetting ?? SocketAddress(ip: dev ? "127.0.0.1" : "0.0.0.0", port: 8443)!
    }
    /// Whether a TLS listener runs.
    var servesTLS: Bool { tlsCertPath != nil || devTLS }

    typealias Invalid = UsageError
    typealias Parsed = OptionParser<ServeOptions>.Result

    static let parser = OptionParser(
        command: "swiftlet serve", specs: table, configFlag: "--config", configEnvironment: "SWIFTLET_CONFIG")

    /// The options as given, validated; `helpRequested` when `--help` was
    /// among them (then nothing else is checked).
    static func read(
        _ arguments: [String], environment: [String: String] = [:],
        readFile: (String) throws -> Data = { try Data(contentsOf: URL(fileURLWithPath: $0)) }
    ) throws(Invalid) -> Parsed {
        var result = try parser.parse(
            arguments, environment: environment, defaults: ServeOptions(), readFile: { Array(try readFile($0)) })
        if result.helpRequested { return result }
        result.options.configPath = result.configPath
        // The variables that predate SWIFTLET_KEYS: one key and its secret.
        if let key = environment["SWIFTLET_API_KEY"], !key.isEmpty, let secret = environment["SWIFTLET_API_SECRET"],
            !secret.isEmpty
        {
            result.options.keys[key] = secret
            result.sources["keys"] = max(result.sources["keys"] ?? .defaultValue, .environment)
        }
        try result.options.validate()
        return result
    }

    static func parse(
        _ arguments: [String], environment: [String: String] = [:],
        readFile: (String) throws -> Data = { try Data(contentsOf: URL(fileURLWithPath: $0)) }
    ) throws(Invalid) -> ServeOptions {
        try read(arguments, environment: environment, readFile: readFile).options
    }

    /// The first ICE-TCP port, or nil when ICE-TCP is off.
    var iceTCPFirstPort: UInt16? { iceTCP ? (iceTCPPortSetting ?? udpPort) : nil }

    private mutating func validate() throws(Invalid) {
        if workers > 0, udpPort > 0, Int(udpPort) + workers - 1 > 65535 {
            throw Invalid("--udp-port \(udpPort) with \(workers) workers runs past port 65535")
        }
        if workers > 0, let p = iceTCPFirstPort, p > 0, Int(p) + workers - 1 > 65535 {
            throw Invalid("--ice-tcp-port \(p) with \(workers) workers runs past port 65535")
        }
        guard (tlsCertPath == nil) == (tlsKeyPath == nil) else {
            throw Invalid("TLS needs both a certificate and a key (--tls-cert and --tls-key, or \"tls\" in the config)")
        }
        if devTLS, !dev, tlsCertPath == nil {
            throw Invalid("--tls alone generates a self-signed certificate, for --dev only; give --tls-cert and --tls-key")
        }
        if dev {
            // Dev mode hands a signed token to anyone who asks (the page's
            // /dev/token): it must not be reachable beyond this machine.
            for (flag, address) in [("--http", httpAddress), ("--https", httpsAddress)] {
                let ip = address.ipBytes
                let loopback = (ip.count == 4 && ip[0] == 127) || (ip.count == 16 && ip == Array(repeating: 0, count: 15) + [1])
                guard loopback || (flag == "--https" && !servesTLS) else {
                    throw Invalid(
                        "--dev mints tokens for anyone who can reach \(flag), so it listens on loopback only "
                            + "(127.0.0.1 or [::1]), not \(address.ip); use API keys to serve other machines")
                }
            }
            keys[Self.devKey] = Self.devSecret
        } else {
            guard !keys.isEmpty else {
                throw Invalid(
                    "without --dev, give API keys: \"keys\" in the --config file, SWIFTLET_KEYS=name:secret, "
                        + "or SWIFTLET_API_KEY and SWIFTLET_API_SECRET")
            }
            for (name, secret) in keys.sorted(by: { $0.key < $1.key }) {
                if let problem = AccessTokenVerifier.secretProblem(secret) {
                    throw Invalid("the secret of API key '\(name)' \(problem)")
                }
            }
        }
        if let webhookKey, keys[webhookKey] == nil {
            throw Invalid("--webhook-key '\(webhookKey)' is not one of the API keys")
        }
    }

    /// The key and secret that sign webhooks, once keys are known.
    var webhookSigner: (key: String, secret: String)? {
        let name = webhookKey ?? keys.keys.sorted().first
        guard let name, let secret = keys[name] else { return nil }
        return (name, secret)
    }

    static func ip(_ v: String) -> String? { SocketAddress(ip: v, port: 1) != nil ? v : nil }
}
