import Cluster
import Foundation
import NetIO
import PeerSession
import RoomProtocol
import Rooms
import SRTP
import SignalingServer
import Wire

/// Every option of `swiftlet serve`, once. To add one: a field in
/// `ServeOptions`, a row here (flag, `SWIFTLET_*` name, config key; a
/// dotted key such as `tls.cert` is a nested object), and a line in
/// docs/CONFIGURATION.md. Help, the environment, the config file and the
/// effective-configuration print follow from the row.
extension ServeOptions {
    static let table: [OptionSpec<ServeOptions>] = [
        OptionSpec(
            key: "http", flag: "--http", environment: "SWIFTLET_HTTP", kind: .value(placeholder: "HOST:PORT", json: .string),
            expects: "HOST:PORT with a numeric host ([::1]:8080 for IPv6)", defaultText: "127.0.0.1:8080",
            help: "where HTTP, the room WebSocket and WHIP/WHEP listen; 0.0.0.0:8080 for every IPv4 address",
            example: "--http 0.0.0.0:8080",
            set: { o, v in
                guard let a = SocketAddress(hostAndPort: v) else { return false }
                o.httpAddress = a
                return true
            }, show: { "\($0.httpAddress)" }),
        OptionSpec(
            key: "udpPort", flag: "--udp-port", environment: "SWIFTLET_UDP_PORT",
            kind: .value(placeholder: "PORT", json: .integer),
            expects: "a port 0...65535 (0: any free port)", defaultText: "10000",
            help: "the first media worker's UDP port; worker n takes PORT+n", example: "--udp-port 20000",
            set: { o, v in
                guard let p = UInt16(v) else { return false }
                o.udpPort = p
                return true
            }, show: { "\($0.udpPort)" }),
        OptionSpec(
            key: "iceTCPPort", flag: "--ice-tcp-port", environment: "SWIFTLET_ICE_TCP_PORT",
            kind: .value(placeholder: "PORT|off", json: .string),
            expects: "a port 0...65535 (0: any free port) or off", defaultText: "the UDP port (10000)",
            help: "the first media worker's ICE-TCP port (RFC 6544, for clients whose UDP is blocked); worker n takes PORT+n",
            example: "--ice-tcp-port 443",
            set: { o, v in
                if v == "off" {
                    o.iceTCP = false
                    return true
                }
                guard let p = UInt16(v) else { return false }
                o.iceTCP = true
                o.iceTCPPortSetting = p
                return true
            }, show: { o in o.iceTCPFirstPort.map { "\($0)" } ?? "off" }),
        OptionSpec(
            key: "workers", flag: "--workers", environment: "SWIFTLET_WORKERS", kind: .value(placeholder: "N", json: .integer),
            expects: "a whole number 1...256", defaultText: "one per core",
            help: "media worker threads, each with its own UDP port", example: "--workers 4",
            set: { o, v in
                guard let n = Int(v), (1...256).contains(n) else { return false }
                o.workers = n
                return true
            }, show: { $0.workers == 0 ? "one per core" : "\($0.workers)" }),
        OptionSpec(
            key: "udpGSO", flag: "--udp-gso", environment: "SWIFTLET_UDP_GSO",
            kind: .value(placeholder: "on|off", json: .string), expects: "on or off", defaultText: "on",
            help:
                "send a run of datagrams to one destination as one UDP GSO message (UDP_SEGMENT) where the kernel has it; off: one datagram a message",
            example: "--udp-gso off",
            set: { o, v in
                switch v {
                case "on": o.udpGSO = true
                case "off": o.udpGSO = false
                default: return false
                }
                return true
            }, show: { $0.udpGSO ? "on" : "off" }),
        bufferOption(
            key: "udpReceiveBuffer", flag: "--udp-receive-buffer", environment: "SWIFTLET_UDP_RECEIVE_BUFFER",
            help:
                "each media socket's kernel receive buffer (SO_RCVBUF): bursts queue here while a worker fans out; 0: the kernel's default",
            keyPath: \.receive),
        bufferOption(
            key: "udpSendBuffer", flag: "--udp-send-buffer", environment: "SWIFTLET_UDP_SEND_BUFFER",
            help: "each media socket's kernel send buffer (SO_SNDBUF); 0: the kernel's default",
            keyPath: \.send),
        OptionSpec(
            key: "roomSpreadAfter", flag: "--room-spread-after", environment: "SWIFTLET_ROOM_SPREAD_AFTER",
            kind: .value(placeholder: "N", json: .integer), expects: "a whole number 0...100000", defaultText: "8",
            help:
                "a room's participants share one media worker up to N, then each goes to the least-loaded worker (0 or 1: all by load)",
            example: "--room-spread-after 16",
            set: { o, v in
                guard let n = Int(v), (0...100_000).contains(n) else { return false }
                o.roomSpreadAfter = n
                return true
            }, show: { "\($0.roomSpreadAfter)" }),
        OptionSpec(
            key: "mediaBind", flag: "--media-bind", environment: "SWIFTLET_MEDIA_BIND",
            kind: .value(placeholder: "IP", json: .string),
            expects: "a numeric IPv4 or IPv6 address", defaultText: ":: (127.0.0.1 with --dev)",
            help: "the address the media sockets bind; :: takes both families and announces every usable interface address",
            example: "--media-bind 10.0.0.5",
            set: { o, v in
                guard let ip = ServeOptions.ip(v) else { return false }
                o.mediaBindIP = ip
                return true
            }, show: { $0.mediaBind }),
        OptionSpec(
            key: "announceIP", flag: "--announce-ip", environment: "SWIFTLET_ANNOUNCE_IP",
            kind: .value(placeholder: "IP", json: .string),
            expects: "a numeric IPv4 or IPv6 address, not a wildcard",
            defaultText: "the bound address, or every usable interface address of a wildcard bind",
            help: "the media address written in ICE candidates instead (the public address behind NAT)",
            example: "--announce-ip 203.0.113.7",
            set: { o, v in
                guard let ip = ServeOptions.ip(v) else { return false }
                o.announcedIP = ip
                return true
            }, show: { $0.announcedIP ?? "the bound address, or every usable interface address of a wildcard bind" }),
        OptionSpec(
            key: "announceLinkLocal", flag: "--announce-link-local", environment: "SWIFTLET_ANNOUNCE_LINK_LOCAL",
            kind: .toggle, expects: "true or false", defaultText: "off",
            help: "with a wildcard bind, also announce IPv4 link-local (169.254/16) addresses",
            example: "--announce-link-local",
            set: { o, v in
                o.announceLinkLocal = v == "true"
                return true
            }, show: { $0.announceLinkLocal ? "on" : "off" }),
        OptionSpec(
            key: "drainSeconds", flag: "--drain-seconds", environment: "SWIFTLET_DRAIN_SECONDS",
            kind: .value(placeholder: "DURATION", json: .duration),
            expects: "a duration from 0s to 1h (30, 30s, 2m)", defaultText: "30s",
            help: "how long SIGTERM waits for sessions to end before stopping", example: "--drain-seconds 1m",
            set: { o, v in
                guard let d = Duration(parsing: v), d <= .seconds(3600) else { return false }
                o.drainSeconds = Int64(d.inSeconds.rounded(.up))
                return true
            }, show: { Duration.seconds($0.drainSeconds).compactDescription }),
        OptionSpec(
            key: "recordDir", flag: "--record-dir", environment: "SWIFTLET_RECORD_DIR",
            kind: .value(placeholder: "DIR", json: .string), expects: "an existing directory", defaultText: "off",
            help: "turns recording on: one WebM file per participant under DIR/<room>/ (docs/RECORDING.md)",
            example: "--record-dir /var/lib/swiftlet/recordings",
            set: { o, v in
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: v, isDirectory: &isDirectory), isDirectory.boolValue else {
                    return false
                }
                o.recordDirectory = v
                return true
            }, show: { $0.recordDirectory ?? "off" }),
        OptionSpec(
            key: "recordRooms", flag: "--record-rooms", environment: "SWIFTLET_RECORD_ROOMS",
            kind: .value(placeholder: "ROOMS", json: .string),
            expects: "comma-separated room names, each may end in * (a prefix)", defaultText: "none",
            help: "rooms recorded from their first track without an API call (needs --record-dir)",
            example: "--record-rooms 'town-hall,class-*'",
            set: { o, v in
                let rooms = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard rooms.count <= 64, rooms.allSatisfy({ $0.count <= 128 }) else { return false }
                o.recordRooms = rooms
                return true
            }, show: { $0.recordRooms.isEmpty ? "none" : $0.recordRooms.joined(separator: ",") }),
        OptionSpec(
            key: "recordMaxDuration", flag: "--record-max-duration", environment: "SWIFTLET_RECORD_MAX_DURATION",
            kind: .value(placeholder: "DURATION", json: .duration), expects: "a duration from 1s to 24h",
            defaultText: "4h", help: "a recording file is closed at this length", example: "--record-max-duration 2h",
            set: { o, v in
                guard let d = Duration(parsing: v), d >= .seconds(1), d <= .seconds(86_400) else { return false }
                o.recordMaxDuration = d
                return true
            }, show: { $0.recordMaxDuration.compactDescription }),
        OptionSpec(
            key: "recordMinFreeMB", flag: "--record-min-free-mb", environment: "SWIFTLET_RECORD_MIN_FREE_MB",
            kind: .value(placeholder: "MB", json: .integer), expects: "a whole number 0...1048576", defaultText: "512",
            help: "recordings stop (and none start) while the directory's file system has less free space",
            example: "--record-min-free-mb 2048",
            set: { o, v in
                guard let n = Int64(v), (0...1_048_576).contains(n) else { return false }
                o.recordMinFreeMB = n
                return true
            }, show: { "\($0.recordMinFreeMB)" }),
        OptionSpec(
            key: "maxSSRCsPerTransport", flag: "--max-ssrcs-per-transport",
            environment: "SWIFTLET_MAX_SSRCS_PER_TRANSPORT", kind: .value(placeholder: "N", json: .integer),
            expects: "a whole number 4...1024", defaultText: "\(PeerTransport.defaultMaxInboundSSRCs)",
            help: "SSRCs a peer may send SRTP/SRTCP from per media transport; packets from more are dropped undecrypted",
            example: "--max-ssrcs-per-transport 32",
            set: { o, v in
                guard let n = Int(v), (4...1024).contains(n) else { return false }
                o.maxSSRCsPerTransport = n
                return true
            }, show: { "\($0.maxSSRCsPerTransport)" }),
        OptionSpec(
            key: "srtpBackend", flag: "--srtp-backend", environment: "SWIFTLET_SRTP_BACKEND",
            kind: .value(placeholder: "openssl|libsrtp2", json: .string),
            expects: "openssl or libsrtp2", defaultText: "openssl",
            help: "SRTP implementation: our own on OpenSSL (no allocation per packet) or Debian's libsrtp2",
            example: "--srtp-backend libsrtp2",
            set: { o, v in
                guard let b = SRTPBackend(rawValue: v) else { return false }
                o.srtpBackend = b
                return true
            }, show: { $0.srtpBackend.rawValue }),
        OptionSpec(
            key: "dev", flag: "--dev", environment: "SWIFTLET_DEV", kind: .toggle, expects: "true or false",
            defaultText: "off",
            help: "development mode: loopback only, API key 'devkey', /dev/token hands out tokens, debug log",
            example: "--dev",
            set: { o, v in
                o.dev = v == "true"
                return true
            }, show: { $0.dev ? "on" : "off" }),
        OptionSpec(
            key: "keys", flag: nil, environment: "SWIFTLET_KEYS", kind: .map,
            expects: "API key names and their secrets (16 bytes or more)", defaultText: "none (devkey with --dev)",
            help: "API keys that sign access tokens; also SWIFTLET_API_KEY with SWIFTLET_API_SECRET",
            example: "\"keys\": {\"prod\": \"a long random secret\"}",
            setMap: { o, entries in
                for (name, secret) in entries {
                    guard !name.isEmpty else { return false }
                    o.keys[name] = secret
                }
                return true
            },
            // Names only: secrets are never printed.
            show: { o in o.keys.isEmpty ? "none" : o.keys.keys.sorted().map { "\($0)=<redacted>" }.joined(separator: ",") }),
        OptionSpec(
            key: "tls.cert", flag: "--tls-cert", environment: "SWIFTLET_TLS_CERT",
            kind: .value(placeholder: "FILE", json: .string), expects: "a PEM file: the certificate, then its chain",
            defaultText: "none (no HTTPS)",
            help: "with tls.key: serve HTTPS and WSS on --https as well (docs/TLS.md); SIGHUP re-reads both files",
            example: "--tls-cert /etc/swiftlet/fullchain.pem",
            set: { o, v in
                guard !v.isEmpty else { return false }
                o.tlsCertPath = v
                return true
            }, show: { $0.tlsCertPath ?? ($0.devTLS ? "generated (--dev --tls)" : "none") }),
        OptionSpec(
            key: "tls.key", flag: "--tls-key", environment: "SWIFTLET_TLS_KEY",
            kind: .value(placeholder: "FILE", json: .string), expects: "a PEM file: the certificate's private key",
            defaultText: "none", help: "the private key of tls.cert (not encrypted)",
            example: "--tls-key /etc/swiftlet/privkey.pem",
            set: { o, v in
                guard !v.isEmpty else { return false }
                o.tlsKeyPath = v
                return true
            }, show: { $0.tlsKeyPath ?? "none" }),
        OptionSpec(
            key: "https", flag: "--https", environment: "SWIFTLET_HTTPS", kind: .value(placeholder: "HOST:PORT", json: .string),
            expects: "HOST:PORT with a numeric host ([::]:8443 for IPv6)",
            defaultText: "0.0.0.0:8443 (127.0.0.1:8443 with --dev)",
            help: "where HTTPS and WSS listen when TLS is on", example: "--https 0.0.0.0:443",
            set: { o, v in
                guard let a = SocketAddress(hostAndPort: v) else { return false }
                o.httpsAddressSetting = a
                return true
            }, show: { $0.servesTLS ? "\($0.httpsAddress)" : "off (no TLS)" }),
        OptionSpec(
            key: "tls.generate", flag: "--tls", environment: "SWIFTLET_TLS_GENERATE", kind: .toggle, expects: "true or false",
            defaultText: "off",
            help: "with --dev: serve HTTPS/WSS with a self-signed certificate made now (its SPKI hash is printed)",
            example: "--dev --tls",
            set: { o, v in
                o.devTLS = v == "true"
                return true
            }, show: { $0.devTLS ? "on" : "off" }),
        OptionSpec(
            key: "logLevel", flag: "--log-level", environment: "SWIFTLET_LOG_LEVEL",
            kind: .value(placeholder: "LEVEL", json: .string), expects: "debug, info, warning or error",
            defaultText: "info (debug with --dev)", help: "the lowest level logged", example: "--log-level warning",
            set: { o, v in
                guard let level = ServerLog.Level(name: v) else { return false }
                o.logLevel = level
                return true
            }, show: { "\($0.effectiveLogLevel)" }),
        OptionSpec(
            key: "logFormat", flag: "--log-format", environment: "SWIFTLET_LOG_FORMAT",
            kind: .value(placeholder: "FORMAT", json: .string), expects: "text or json", defaultText: "text",
            help: "text (time level message key=value) or json (one object per line, for log shippers)",
            example: "--log-format json",
            set: { o, v in
                guard let format = ServerLog.Format(rawValue: v.lowercased()) else { return false }
                o.logFormat = format
                return true
            }, show: { $0.logFormat.rawValue }),
        OptionSpec(
            key: "allowedOrigins", flag: "--allowed-origins", environment: "SWIFTLET_ALLOWED_ORIGINS",
            kind: .value(placeholder: "ORIGINS", json: .string),
            expects: "comma-separated origins such as https://app.example.com", defaultText: "any",
            help: "origins whose pages may open the room WebSocket (browsers send Origin); any when unset",
            example: "--allowed-origins https://app.example.com",
            set: { o, v in
                let origins = v.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
                guard !origins.isEmpty, origins.allSatisfy({ $0.hasPrefix("http://") || $0.hasPrefix("https://") })
                else { return false }
                o.allowedOrigins = origins
                return true
            }, show: { $0.allowedOrigins.isEmpty ? "any" : $0.allowedOrigins.joined(separator: ",") }),
        OptionSpec(
            key: "webhook.urls", flag: "--webhook-url", environment: "SWIFTLET_WEBHOOK_URLS",
            kind: .value(placeholder: "URL", json: .string),
            expects: "http://HOST[:PORT][/PATH] (several: repeat the flag, or separate with commas)", defaultText: "none",
            help: "receive room events as signed JSON POSTs (docs/API.md, Webhooks); repeatable",
            example: "--webhook-url http://127.0.0.1:9000/hooks",
            set: { o, v in
                let urls = v.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
                guard !urls.isEmpty, urls.count <= 16, urls.allSatisfy({ WebhookNotifier.problem(url: $0) == nil }) else {
                    return false
                }
                o.webhookURLs = urls
                return true
            }, show: { $0.webhookURLs.isEmpty ? "none" : $0.webhookURLs.joined(separator: ",") }, repeatable: true),
        OptionSpec(
            key: "webhook.key", flag: "--webhook-key", environment: "SWIFTLET_WEBHOOK_KEY",
            kind: .value(placeholder: "KEY", json: .string),
            expects: "the name of one of the API keys", defaultText: "the only key, or the first by name",
            help: "the API key whose secret signs webhook requests (the JWT's iss)",
            set: { o, v in
                guard !v.isEmpty else { return false }
                o.webhookKey = v
                return true
            }, show: { $0.webhookKey ?? "(first key)" }),
        OptionSpec(
            key: "webhook.retryFor", flag: "--webhook-retry-for", environment: "SWIFTLET_WEBHOOK_RETRY_FOR",
            kind: .value(placeholder: "D", json: .duration),
            expects: "a duration from 0 to 1h", defaultText: "30s",
            help: "how long a webhook event is retried (backoff 0.5 s doubling to 8 s) before it is dropped",
            set: { o, v in
                guard let d = Duration(parsing: v), d >= .zero, d <= .seconds(3600) else { return false }
                o.webhookRetryFor = d
                return true
            }, show: { "\($0.webhookRetryFor)" }),
        OptionSpec(
            key: "webhook.queue", flag: "--webhook-queue", environment: "SWIFTLET_WEBHOOK_QUEUE",
            kind: .value(placeholder: "N", json: .integer),
            expects: "1 to 100000", defaultText: "1000",
            help: "webhook events waiting per URL; when full, new events are dropped and counted",
            set: { o, v in
                guard let n = Int(v), (1...100_000).contains(n) else { return false }
                o.webhookQueue = n
                return true
            }, show: { "\($0.webhookQueue)" }),
        OptionSpec(
            key: "trustedProxies", flag: "--trusted-proxies", environment: "SWIFTLET_TRUSTED_PROXIES",
            kind: .value(placeholder: "PREFIXES", json: .string),
            expects: "comma-separated addresses or CIDR prefixes such as 127.0.0.1,10.0.0.0/8", defaultText: "none",
            help:
                "reverse proxies whose X-Forwarded-For / Forwarded is believed: logs and per-address limits name the client they forward for",
            example: "--trusted-proxies 127.0.0.1,::1",
            set: { o, v in
                let prefixes = v.split(separator: ",").map { AddressPrefix($0.trimmingCharacters(in: .whitespaces)) }
                guard !prefixes.isEmpty, prefixes.allSatisfy({ $0 != nil }) else { return false }
                o.connectionLimits.trustedProxies = prefixes.compactMap { $0 }
                return true
            },
            show: {
                $0.connectionLimits.trustedProxies.isEmpty
                    ? "none" : $0.connectionLimits.trustedProxies.map(\.description).joined(separator: ",")
            }),
        OptionSpec(
            key: "turn.enabled", flag: "--turn", environment: "SWIFTLET_TURN", kind: .toggle, expects: "true or false",
            defaultText: "off",
            help: "run the built-in TURN server (RFC 8656) for networks that block UDP; it relays only to this node's media",
            example: "--turn",
            set: { o, v in
                o.turn = v == "true"
                return true
            }, show: { $0.turn ? "on" : "off" }),
        OptionSpec(
            key: "turn.port", flag: "--turn-port", environment: "SWIFTLET_TURN_PORT",
            kind: .value(placeholder: "PORT", json: .integer), expects: "a port 0...65535 (0: any free port)",
            defaultText: "3478", help: "TURN's UDP and TCP port (on the media bind address)", example: "--turn-port 3478",
            set: { o, v in
                guard let p = UInt16(v) else { return false }
                o.turnPort = p
                return true
            }, show: { "\($0.turnPort)" }),
        OptionSpec(
            key: "turn.tlsPort", flag: "--turn-tls-port", environment: "SWIFTLET_TURN_TLS_PORT",
            kind: .value(placeholder: "PORT", json: .integer), expects: "a port 0...65535 (0: any free port)",
            defaultText: "5349", help: "TURN over TLS, with tls.cert (443 in production: what strict firewalls let out)",
            example: "--turn-tls-port 443",
            set: { o, v in
                guard let p = UInt16(v) else { return false }
                o.turnTLSPort = p
                return true
            }, show: { $0.servesTLS ? "\($0.turnTLSPort)" : "off (no TLS)" }),
        OptionSpec(
            key: "turn.host", flag: "--turn-host", environment: "SWIFTLET_TURN_HOST",
            kind: .value(placeholder: "HOST", json: .string), expects: "a host name or IP address",
            defaultText: "the announced media address",
            help: "the host in the TURN URLs given to clients; the certificate's name for turns:",
            example: "--turn-host turn.example.com",
            set: { o, v in
                guard !v.isEmpty, !v.contains(where: { " /?#<>\"".contains($0) }) else { return false }
                o.turnHost = v
                return true
            }, show: { $0.turnHost ?? "the announced media address" }),
        OptionSpec(
            key: "redis", flag: "--redis", environment: "SWIFTLET_REDIS", kind: .value(placeholder: "URL", json: .string),
            expects: "redis://HOST[:PORT] or unix:/PATH", defaultText: "none (the server runs alone)",
            help: "join the cluster whose shared state is this Redis (docs/CLUSTER.md)",
            example: "--redis redis://10.0.0.5:6379",
            set: { o, v in
                guard let e = try? RedisEndpoint(url: v) else { return false }
                o.redis = e
                return true
            }, show: { $0.redis.map(\.description) ?? "none" }),
        OptionSpec(
            key: "cluster.nodeName", flag: "--node-name", environment: "SWIFTLET_NODE_NAME",
            kind: .value(placeholder: "NAME", json: .string), expects: "1 to 64 of A-Z a-z 0-9 . _ -",
            defaultText: "the host name", help: "this node's name in the cluster (a boot nonce is added to it)",
            example: "--node-name sfu-eu-1",
            set: { o, v in
                guard NodeID.isValidName(v) else { return false }
                o.nodeName = v
                return true
            }, show: { $0.nodeName ?? "the host name" }),
        OptionSpec(
            key: "cluster.region", flag: "--region", environment: "SWIFTLET_REGION",
            kind: .value(placeholder: "NAME", json: .string), expects: "1 to 64 of A-Z a-z 0-9 . _ -",
            defaultText: "none", help: "this node's region: rooms are placed in the entry node's region first",
            example: "--region eu-west",
            set: { o, v in
                guard NodeID.isValidName(v) else { return false }
                o.region = v
                return true
            }, show: { $0.region ?? "none" }),
        nodeLimit(
            "maxRooms", flag: "--node-max-rooms", \.nodeLimits.maxRooms,
            "rooms the cluster places on this node; at the limit it takes no new room (0: an entry node that proxies every client to the node of its room)",
            minimum: 0),
        nodeLimit(
            "maxParticipants", flag: "--node-max-participants", \.nodeLimits.maxParticipants,
            "participants the cluster places on this node; at the limit it takes no new room", minimum: 0),
        nodeLimit(
            "roomNodeCapacity", flag: "--room-node-capacity", \.nodeLimits.roomNodeCapacity,
            "participants of one room on this node before the room grows onto another node"),
        limit(
            "turnAllocations", 1000, 1...100_000, \.turnAllocations,
            "TURN allocations (relay ports) on this node; one more: TURN 486 Allocation Quota Reached"),
        limit(
            "turnAllocationsPerUser", 8, 1...1000, \.turnAllocationsPerUser,
            "TURN allocations one participant's credentials hold; one more: TURN 486"),
        limit(
            "sdpBytes", 128 * 1024, 1024...256 * 1024, \.roomLimits.sdpBytes,
            "bytes of one SDP offer or answer; larger: HTTP 413 / error too_large, before parsing"),
        limit(
            "sectionsPerOffer", 16, 1...256, \.roomLimits.sectionsPerOffer,
            "m-sections in one publish or WHEP offer; more: HTTP 400 / error too_many_tracks"),
        limit(
            "tracksPerParticipant", 8, 1...256, \.roomLimits.tracksPerParticipant,
            "tracks one participant publishes; more: HTTP 400 / error too_many_tracks"),
        limit(
            "participantsPerRoom", 100, 1...100_000, \.roomLimits.participantsPerRoom,
            "members of one room; one more: HTTP 409 / error room_full"),
        limit(
            "rooms", 1000, 1...1_000_000, \.roomLimits.rooms,
            "rooms on this server; one more: HTTP 503 with Retry-After / error server_full"),
        limit(
            "subscriptionsPerParticipant", 128, 1...10_000, \.roomLimits.subscriptionsPerParticipant,
            "tracks one participant receives; more: error too_many_subscriptions"),
        limit(
            "connections", 10_000, 1...1_000_000, \.connectionLimits.total,
            "signalling connections open at once; one more: HTTP 503, closed"),
        limit(
            "connectionsPerAddress", 64, 1...1_000_000, \.connectionLimits.perAddress,
            "signalling connections open from one client address (IPv4, or IPv6 /64); one more: HTTP 429, closed"),
        limit(
            "connectionRate", 10, 1...1_000_000, \.connectionRateSetting,
            "new signalling connections per second from one address, on average; faster: HTTP 429, closed"),
        limit(
            "connectionBurst", 40, 1...1_000_000, \.connectionBurstSetting,
            "new signalling connections one address may open at once after a quiet spell"),
        limit(
            "connectionBufferBytes", 4 << 20, 64 << 10...1 << 30, \.connectionLimits.bufferBytes,
            "bytes queued for one client that does not read; more: the connection closes"),
        limit(
            "serverBufferBytes", 256 << 20, 1 << 20...1 << 40, \.connectionLimits.serverBufferBytes,
            "bytes queued for all clients together; the connection that passes it closes"),
        limit(
            "serverInputBytes", 256 << 20, 1 << 20...1 << 40, \.connectionLimits.serverInputBytes,
            "bytes held for partial requests and room messages, all clients together; the connection that passes it gets 503 / close 1013"
        ),
        OptionSpec(
            key: "limits.joinTimeout", flag: "--limits-join-timeout", environment: "SWIFTLET_LIMITS_JOIN_TIMEOUT",
            kind: .value(placeholder: "DURATION", json: .duration), expects: "a duration from 100ms to 10m",
            defaultText: "10s", help: "a room WebSocket that has not joined this long after opening is closed (1008)",
            example: "--limits-join-timeout 5s",
            set: { o, v in
                guard let d = Duration(parsing: v), d >= .milliseconds(100), d <= .seconds(600) else { return false }
                o.joinTimeout = d
                return true
            }, show: { $0.joinTimeout.compactDescription }),
    ]

    /// A row for one whole-number limit, `limits.NAME` in the config file,
    /// `--limits-name` and `SWIFTLET_LIMITS_NAME` (docs/SECURITY.md).
    /// A cluster limit of this node (`cluster.<name>`), unlimited unless set.
    private static func nodeLimit(
        _ name: String, flag: String, _ path: WritableKeyPath<ServeOptions, Int?> & Sendable, _ help: String,
        minimum: Int = 1
    ) -> OptionSpec<ServeOptions> {
        let upper = String(flag.dropFirst(2).uppercased().map { $0 == "-" ? "_" : $0 })
        return OptionSpec(
            key: "cluster.\(name)", flag: flag, environment: "SWIFTLET_\(upper)",
            kind: .value(placeholder: "N", json: .integer), expects: "a whole number \(minimum)...1000000",
            defaultText: "no limit", help: help, example: "\(flag) 100",
            set: { o, v in
                guard let n = Int(v), (minimum...1_000_000).contains(n) else { return false }
                o[keyPath: path] = n
                return true
            }, show: { $0[keyPath: path].map { "\($0)" } ?? "no limit" })
    }

    /// A row for one of the media sockets' kernel buffer sizes.
    private static func bufferOption(
        key: String, flag: String, environment: String, help: String,
        keyPath: WritableKeyPath<UDPSocketBuffers, Int> & Sendable
    ) -> OptionSpec<ServeOptions> {
        let range = UDPSocketBuffers.allowed
        return OptionSpec(
            key: key, flag: flag, environment: environment, kind: .value(placeholder: "BYTES", json: .integer),
            expects: "0 or a whole number \(range.lowerBound)...\(range.upperBound)",
            defaultText: "\(UDPSocketBuffers.standard[keyPath: keyPath])", help: help, example: "\(flag) 8388608",
            set: { o, v in
                guard let n = Int(v), n == 0 || range.contains(n) else { return false }
                o.socketBuffers[keyPath: keyPath] = n
                return true
            }, show: { o in o.socketBuffers[keyPath: keyPath] == 0 ? "kernel default" : "\(o.socketBuffers[keyPath: keyPath])" })
    }

    private static func limit(
        _ name: String, _ defaultValue: Int, _ range: ClosedRange<Int>, _ path: WritableKeyPath<ServeOptions, Int> & Sendable,
        _ help: String
    ) -> OptionSpec<ServeOptions> {
        var dashed = ""
        for c in name {
            if c.isUppercase { dashed += "-" + c.lowercased() } else { dashed.append(c) }
        }
        let upper = String(dashed.uppercased().map { $0 == "-" ? "_" : $0 })
        return OptionSpec(
            key: "limits.\(name)", flag: "--limits-\(dashed)", environment: "SWIFTLET_LIMITS_\(upper)",
            kind: .value(placeholder: "N", json: .integer),
            expects: "a whole number \(range.lowerBound)...\(range.upperBound)", defaultText: "\(defaultValue)", help: help,
            example: "--limits-\(dashed) \(defaultValue)",
            set: { o, v in
                guard let n = Int(v), range.contains(n) else { return false }
                o[keyPath: path] = n
                return true
            }, show: { "\($0[keyPath: path])" })
    }
}

extension ServeOptions {
    /// The token bucket's figures as whole numbers for the option table.
    var connectionRateSetting: Int {
        get { Int(connectionLimits.ratePerSecond) }
        set { connectionLimits.ratePerSecond = Double(newValue) }
    }
    var connectionBurstSetting: Int {
        get { Int(connectionLimits.burst) }
        set { connectionLimits.burst = Double(newValue) }
    }

    var signalingTimeouts: SignalingTimeouts {
        var t = SignalingTimeouts()
        t.join = joinTimeout
        return t
    }
}
