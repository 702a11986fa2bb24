import NetIO
import RoomProtocol
import Rooms
import Signaling
import Synchronization
import TLS
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// The signalling side of `swiftlet serve`: HTTP/1.1 and the room
/// WebSocket on one TCP port, the rooms of this server, and a ticker for
/// the rooms' timers. Media commands leave through `media`, to be posted to
/// the worker that owns the room.
/// How long a signalling connection may take or sit idle.
package struct SignalingTimeouts: Sendable {
    /// From the first byte of an HTTP request to its end (slow clients get 408).
    package var request: Duration = .seconds(10)
    /// A keep-alive HTTP connection with no request in progress.
    package var idle: Duration = .seconds(60)
    /// Server pings on a quiet WebSocket.
    package var ping: Duration = .seconds(15)
    /// A WebSocket from which nothing (not even a pong) arrived.
    package var webSocket: Duration = .seconds(45)
    /// A room WebSocket that has not joined this long after the upgrade
    /// is closed (1008).
    package var join: Duration = .seconds(10)
    package init() {}
}

/// Per-client limits of the signalling listener (docs/SECURITY.md).
package struct SignalingConnectionLimits: Equatable, Sendable {
    /// Open connections per client address (IPv4, or IPv6 /64).
    package var perAddress = 64
    /// New connections per second per address (token bucket rate)...
    package var ratePerSecond = 10.0
    /// ...and its burst.
    package var burst = 40.0
    /// Connections open at once on the server.
    package var total = 10_000
    /// Bytes queued for one client that does not read.
    package var bufferBytes = 4 << 20
    /// Bytes queued for all clients together.
    package var serverBufferBytes = 256 << 20
    /// Bytes held for partial requests and room messages, all clients
    /// together (`ServerInputBudget`).
    package var serverInputBytes = 256 << 20
    /// Reverse proxies whose `X-Forwarded-For`/`Forwarded` is believed:
    /// the limits above count the clients they name, not the proxy.
    package var trustedProxies: [AddressPrefix] = []
    package init() {}
}

package final class SignalingServer: Sendable {
    package let service: RoomService
    /// The other nodes of the cluster: their connections (proxied
    /// clients, each limited at its entry node) are not counted by the
    /// per-address limits (`PeerAddressSet`). Empty without `--redis`.
    package let clusterPeers: PeerAddressSet
    private let tcp: TCPServer<HTTPSession>
    private let ticker: WorkerThread
    private let running = RunningFlag()

    package var localAddress: SocketAddress { tcp.localAddress }
    /// The TCP shell's counters: connections, refusals, queued bytes.
    package var connectionStatistics: TCPServerStatistics { tcp.statistics }
    /// The HTTPS/WSS listener's address, when serving TLS.
    package var secureLocalAddress: SocketAddress? { tcp.secureLocalAddress }

    /// With `secure`, a second listener serves the same routes and the room
    /// WebSocket over TLS (HTTPS, WSS) with the slot's current context.
    /// `loopbackHostsOnly` (dev mode): requests must name a loopback host
    /// the server listens on, and browsers' WebSocket and `/dev/token`
    /// requests must come from such an origin (`HostCheck`);
    /// `allowedOrigins` adds origins the room WebSocket accepts (nil: any,
    /// outside dev mode).
    package init(
        bindingTo address: SocketAddress, secure: (address: SocketAddress, contexts: TLSContextSlot)? = nil,
        verifier: AccessTokenVerifier,
        rooms configuration: RoomDirectory<RandomIdentifiers>.Configuration,
        media: @escaping @Sendable (MediaCommand) -> Void = { _ in },
        mediaMetrics: @escaping @Sendable () -> String = { "" },
        timeouts configured: SignalingTimeouts = SignalingTimeouts(),
        connectionLimits: SignalingConnectionLimits = SignalingConnectionLimits(),
        log: ServerLog = .off,
        devTokens: DevTokenIssuer? = nil,
        loopbackHostsOnly: Bool = false,
        allowedOrigins: [String]? = nil,
        iceServers: (@Sendable (String) -> [ICEServer])? = nil
    ) throws(SocketError) {
        let service = RoomService(
            verifier: verifier, configuration: configuration, media: media, log: log, iceServers: iceServers)
        let router = HTTPRouter(service: service, mediaMetrics: mediaMetrics, devTokens: devTokens)
        let timeouts = HTTPSession.Timeouts(
            requestTimeout: configured.request, idleTimeout: configured.idle, pingInterval: configured.ping,
            webSocketTimeout: configured.webSocket, joinTimeout: configured.join)
        var tcpConfiguration = TCPServerConfiguration()
        tcpConfiguration.maxConnections = connectionLimits.total
        tcpConfiguration.maxConnectionsPerAddress = connectionLimits.perAddress
        tcpConfiguration.newConnectionsPerSecondPerAddress = connectionLimits.ratePerSecond
        tcpConfiguration.newConnectionBurstPerAddress = connectionLimits.burst
        tcpConfiguration.maxUnsentBytes = connectionLimits.bufferBytes
        tcpConfiguration.maxUnsentBytesTotal = connectionLimits.serverBufferBytes
        tcpConfiguration.trustedProxies = connectionLimits.trustedProxies
        let clusterPeers = PeerAddressSet()
        tcpConfiguration.exemptPeers = clusterPeers
        tcpConfiguration.refusalBytes = Self.refusal
        tcpConfiguration.onRefusal = { peer, why, suppressed in
            var fields: [(String, String)] = [("remote", peer.map { "\($0)" } ?? "-"), ("reason", why.description)]
            if suppressed > 0 { fields.append(("unlogged", "\(suppressed)")) }
            log(.warning, "connection refused", fields)
        }
        // A TLS handshake is held to the limit of a slow HTTP request.
        tcpConfiguration.tlsHandshakeTimeout = configured.request
        let forwarded =
            connectionLimits.trustedProxies.isEmpty
            ? nil
            : ForwardedClientAdmission(
                trusted: connectionLimits.trustedProxies,
                limits: .init(
                    maxConnectionsPerAddress: connectionLimits.perAddress, connectionsPerSecond: connectionLimits.ratePerSecond,
                    burst: connectionLimits.burst, maxAddresses: tcpConfiguration.maxTrackedAddresses))
        let inputBudget = ServerInputBudget(limit: connectionLimits.serverInputBytes)
        tcp = try TCPServer(bindingTo: address, secure: secure, configuration: tcpConfiguration) { id, remote, now in
            HTTPSession(
                id: ConnectionID(id.rawValue), remote: remote, forwarded: forwarded, inputBudget: inputBudget, router: router,
                service: service, timeouts: timeouts, now: now)
        }
        self.service = service
        self.clusterPeers = clusterPeers
        service.attach(TCPOutlet(server: tcp))
        // Dev mode answers only to loopback names (DNS rebinding); an
        // allowed-origins list restricts the WebSocket's Origin in either.
        var check = loopbackHostsOnly ? HostCheck.loopback(http: tcp.localAddress, https: tcp.secureLocalAddress) : .any
        if let allowedOrigins { check.origins = (check.origins ?? []).union(allowedOrigins.map { $0.lowercased() }) }
        router.hostCheck.value.withLock { [check] in $0 = check }
        // Grace periods are whole seconds; a quarter-second tick is plenty.
        let running = self.running
        ticker = WorkerThread {
            while running.value.load(ordering: .acquiring) {
                service.tick(now: MonotonicClock.now())
                var pause = timespec(tv_sec: 0, tv_nsec: 250_000_000)
                nanosleep(&pause, nil)
            }
        }
    }

    /// What a connection refused at accept reads, where it can (the plain
    /// listener): 429 for the per-address limits, 503 when the server is
    /// full (RFC 6585 section 4, RFC 9110 section 15.6.4), with Retry-After.
    static func refusal(_ why: TCPRefusal) -> [UInt8] {
        let status: Int
        switch why {
        case .tooManyConnectionsFromAddress, .rateLimited: status = 429
        case .serverFull: status = 503
        case .unsentLimit, .serverUnsentLimit: return []
        }
        var response = HTTPResponse(
            status: status,
            headers: HTTPHeaders([
                ("Content-Type", "text/plain; charset=utf-8"), ("Retry-After", "1"), ("Connection", "close"),
            ]),
            body: Array("\(why.description)\n".utf8))
        response.headers.append(name: "Cache-Control", value: "no-store")
        return response.serialize()
    }

    /// SIGTERM: HTTP keeps being served (`/readyz` answers 503, `/healthz`
    /// and `/metrics` as before); new joins (the `/rtc` upgrade, WHIP/WHEP
    /// offers) get 503 with `Retry-After`; existing sessions go on, and
    /// every connected participant hears `going-away` with the deadline.
    package func drain(until deadline: Instant, deadlineEpochMilliseconds: Int64) {
        service.startDraining(until: deadline, deadlineEpochMilliseconds: deadlineEpochMilliseconds, now: MonotonicClock.now())
    }

    /// The drain's end: every room WebSocket gets a close frame with 1001
    /// (going away); waits up to `wait` for the clients' close frames to
    /// come back (the closing handshake, RFC 6455 section 7.1.2) and
    /// returns how many WebSockets are still open.
    @discardableResult
    package func closeSessions(wait: Duration) -> Int {
        for connection in service.openWebSockets {
            tcp.post(to: TCPConnectionID(rawValue: connection.rawValue)) { session, _ in session.goAway() }
        }
        let end = MonotonicClock.now() + wait
        while service.snapshot.webSockets > 0, MonotonicClock.now() < end {
            var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
            nanosleep(&pause, nil)
        }
        return service.snapshot.webSockets
    }

    package func stop() {
        running.value.store(false, ordering: .releasing)
        ticker.join()
        proxyBox.withLock { $0 }?.stop()
        tcp.stop()
    }

    private let proxyBox = Mutex<SignalingProxy?>(nil)

    /// `swiftlet serve --redis`: joins are placed through `routing`, and a
    /// client whose room lives on another node is proxied there
    /// (docs/CLUSTER.md). Call once, before clients arrive.
    package func joinCluster(_ routing: any ClusterRouting) {
        let tcp = self.tcp
        let log = service.log
        // The rooms layer's own outlet: the same framing and close.
        let outlet = TCPOutlet(server: tcp)
        let proxy = SignalingProxy(
            deliver: { connection, text in outlet.sendText(Array(text.utf8), to: connection) },
            end: { connection, code, reason in outlet.close(connection, code: code, reason: reason) },
            answer: { connection, serial, response in
                Self.answer(HTTPExchangeKey(connection: connection, serial: serial), .response(response), through: tcp)
            }, log: log)
        proxyBox.withLock { $0 = proxy }
        service.attachCluster(
            ClusterLink(routing: routing, proxy: proxy, answer: { key, answer in Self.answer(key, answer, through: tcp) }))
    }

    /// A deferred WHIP/WHEP request's answer, to its session on the
    /// signalling loop (dropped there if the session moved on).
    private static func answer(_ key: HTTPExchangeKey, _ answer: DeferredHTTPAnswer, through tcp: TCPServer<HTTPSession>) {
        tcp.post(to: TCPConnectionID(rawValue: key.connection.rawValue)) { session, now in
            session.answerDeferred(serial: key.serial, answer, now: now)
        }
    }

    /// The proxy's counters, in a cluster.
    package var proxyStatistics: SignalingProxy.Statistics? { proxyBox.withLock { $0 }?.statistics }
}

/// Sends the rooms layer's bytes through the TCP server (any thread).
private final class TCPOutlet: SignalingOutlet {
    let server: TCPServer<HTTPSession>
    init(server: TCPServer<HTTPSession>) { self.server = server }
    func send(_ bytes: [UInt8], to connection: ConnectionID) {
        server.send(bytes, to: TCPConnectionID(rawValue: connection.rawValue))
    }
    func close(_ connection: ConnectionID) {
        close(connection, code: .policyViolation, reason: "replaced by a newer connection")
    }
    func close(_ connection: ConnectionID, code: WebSocketCloseCode, reason: String) {
        // A close frame, then the socket.
        var socket = WebSocketConnection()
        socket.close(code: code, reason: reason)
        server.send(socket.takeOutput(), to: TCPConnectionID(rawValue: connection.rawValue), then: .afterSend)
    }
}

private final class RunningFlag: Sendable {
    let value = Atomic<Bool>(true)
}
