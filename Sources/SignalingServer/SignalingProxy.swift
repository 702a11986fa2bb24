import CShim
import HTTPClient
import NetIO
import Rooms
import Signaling
import Synchronization
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// A client's room WebSocket carried to the node that holds its room
/// (issue #15, docs/CLUSTER.md): the entry node opens one WebSocket of its
/// own to that node's `/rtc` per client session and relays the room
/// protocol's text messages both ways, in order. TCP keeps them ordered
/// and whole; a lost upstream connection is the gap: the client's
/// WebSocket is closed with 1012 (service restart, RFC 6455 section 7.4.1
/// via the IANA registry) and the client resumes with its token, through
/// this node or another, within the home node's grace period.
///
/// A WHIP/WHEP request whose room lives on another node is carried there
/// too, on the same thread: one `HTTPExchange` per request (a connection
/// of its own, `Connection: close`), held to the same connect timeout and
/// to the client's request deadline; its answer goes back to the client's
/// HTTP session (`answer`), and a failure becomes 502 or 504
/// (`HTTPSessionForwarding`).
///
/// One thread with its own epoll: the signalling loop and the rooms' lock
/// never wait on another node.
package final class SignalingProxy: Sendable {
    /// The header that marks a proxied upgrade: the entry node's id. A
    /// node never proxies such a session again (one hop at most).
    package static let viaHeader = "X-Swiftlet-Via"
    /// The room's epoch as the entry node placed it (`ClusterEpochCheck`):
    /// the room's node serves the join only at that same epoch.
    package static let epochHeader = "X-Swiftlet-Epoch"
    /// How long an upstream may take to connect and answer the upgrade.
    package static let connectTimeout: Duration = .seconds(5)
    /// Messages held for one upstream that has not opened yet.
    static let maxHeldMessages = 64

    enum Command: Sendable {
        case open(ConnectionID, ServerEndpointBox, HTTPHeaders, [String])
        case forward(ConnectionID, String)
        case close(ConnectionID, WebSocketCloseCode?)
        case exchange(HTTPExchangeKey, ServerEndpointBox, ForwardedHTTPRequest, deadline: Instant)
        case cancelExchange(HTTPExchangeKey)
        case stop
    }

    private let mailbox = Mailbox<Command>()
    private let thread: WorkerThread
    private let counters: Counters

    final class Counters: Sendable {
        let sessions = Atomic<Int>(0)
        let opened = Atomic<Int>(0)
        let lost = Atomic<Int>(0)
        let toHome = Atomic<Int>(0)
        let fromHome = Atomic<Int>(0)
        let httpInFlight = Atomic<Int>(0)
        let httpRelayed = Atomic<Int>(0)
        let httpFailed = Atomic<Int>(0)
        let httpTimedOut = Atomic<Int>(0)
        let httpCancelled = Atomic<Int>(0)
    }

    /// `deliver` sends a text message to the client's WebSocket; `end`
    /// closes it with a code and reason; `answer` hands a client's HTTP
    /// session the response to its request `serial`. All from the
    /// proxy's thread.
    package init(
        deliver: @escaping @Sendable (ConnectionID, String) -> Void,
        end: @escaping @Sendable (ConnectionID, WebSocketCloseCode, String) -> Void,
        answer: @escaping @Sendable (ConnectionID, UInt64, HTTPResponse) -> Void,
        log: ServerLog
    ) {
        let mailbox = self.mailbox
        let counters = Counters()
        self.counters = counters
        thread = WorkerThread(name: "swiftlet-proxy") {
            ProxyLoop(mailbox: mailbox, counters: counters, deliver: deliver, end: end, answer: answer, log: log).run()
        }
    }

    /// Sends `request` (the client's request `key.serial` on
    /// `key.connection`) to the room's node; its answer, or a 502/504,
    /// goes to `answer` by `deadline` at the latest.
    func exchange(_ request: ForwardedHTTPRequest, for key: HTTPExchangeKey, to endpoint: ServerEndpoint, deadline: Instant) {
        mailbox.post(.exchange(key, ServerEndpointBox(endpoint), request, deadline: deadline))
    }

    /// The client went away (or timed out) before the answer: the exchange
    /// is dropped.
    func cancelExchange(_ key: HTTPExchangeKey) { mailbox.post(.cancelExchange(key)) }

    /// Opens the upstream for `connection` and sends `messages` (the join,
    /// and what the client sent while the room was being placed) once it
    /// is open.
    package func open(_ connection: ConnectionID, to endpoint: ServerEndpoint, headers: HTTPHeaders, messages: [String]) {
        mailbox.post(.open(connection, ServerEndpointBox(endpoint), headers, messages))
    }

    package func forward(_ text: String, from connection: ConnectionID) { mailbox.post(.forward(connection, text)) }

    /// The client's WebSocket ended: with its close code (1000/1001, a
    /// leave, passed on as such) or without one (dropped: the upstream
    /// TCP connection is dropped too, and the home node's grace period
    /// starts, as for a client of its own).
    package func close(_ connection: ConnectionID, code: WebSocketCloseCode?) { mailbox.post(.close(connection, code)) }

    package struct Statistics: Equatable, Sendable {
        /// Proxied sessions open now.
        package var sessions: Int
        /// Upstreams opened, and lost (closed by neither side's close frame).
        package var opened: Int
        package var lost: Int
        package var messagesToHome: Int
        package var messagesFromHome: Int
        /// WHIP/WHEP requests waiting on the room's node now.
        package var httpInFlight: Int
        /// WHIP/WHEP requests sent to the room's node, by outcome: its
        /// answer relayed (whatever its status), no connection or a bad
        /// answer (502), no answer by the request's deadline (504), or the
        /// client gone first.
        package var httpRelayed: Int
        package var httpFailed: Int
        package var httpTimedOut: Int
        package var httpCancelled: Int
    }

    package var statistics: Statistics {
        Statistics(
            sessions: counters.sessions.load(ordering: .relaxed), opened: counters.opened.load(ordering: .relaxed),
            lost: counters.lost.load(ordering: .relaxed), messagesToHome: counters.toHome.load(ordering: .relaxed),
            messagesFromHome: counters.fromHome.load(ordering: .relaxed),
            httpInFlight: counters.httpInFlight.load(ordering: .relaxed),
            httpRelayed: counters.httpRelayed.load(ordering: .relaxed), httpFailed: counters.httpFailed.load(ordering: .relaxed),
            httpTimedOut: counters.httpTimedOut.load(ordering: .relaxed),
            httpCancelled: counters.httpCancelled.load(ordering: .relaxed))
    }

    package func stop() {
        mailbox.post(.stop)
        thread.join()
    }
}

/// One client request carried to another node: the client's connection
/// and the serial of its request there (a later request on the same
/// connection never takes an earlier one's answer).
struct HTTPExchangeKey: Hashable, Sendable {
    let connection: ConnectionID
    let serial: UInt64
}

/// `ServerEndpoint` holds a TLS context (a class): boxed to cross threads
/// once, read only by the proxy's thread.
final class ServerEndpointBox: @unchecked Sendable {
    let endpoint: ServerEndpoint
    init(_ endpoint: ServerEndpoint) { self.endpoint = endpoint }
}

/// The proxy's thread: its epoll, its upstreams.
private final class ProxyLoop {
    final class Upstream {
        let client: SignalingClient
        let connection: ConnectionID
        let tag: UInt64
        var held: [String]
        let openBy: Instant
        var watchingWritable = true
        /// The client left or dropped: the upstream is closing on our side.
        var closing = false

        init(client: SignalingClient, connection: ConnectionID, tag: UInt64, held: [String], openBy: Instant) {
            self.client = client
            self.connection = connection
            self.tag = tag
            self.held = held
            self.openBy = openBy
        }
    }

    /// A WHIP/WHEP request on its way to the room's node.
    final class Exchange {
        let exchange: HTTPExchange
        let key: HTTPExchangeKey
        let tag: UInt64
        let node: String
        let connectBy: Instant
        let deadline: Instant
        var watchingWritable = true

        init(exchange: HTTPExchange, key: HTTPExchangeKey, tag: UInt64, node: String, connectBy: Instant, deadline: Instant) {
            self.exchange = exchange
            self.key = key
            self.tag = tag
            self.node = node
            self.connectBy = connectBy
            self.deadline = deadline
        }

        /// When it is given up: unconnected by `connectBy`, unanswered by
        /// `deadline`.
        var expiry: Instant { exchange.stream.connected ? deadline : min(connectBy, deadline) }
    }

    let mailbox: Mailbox<SignalingProxy.Command>
    let counters: SignalingProxy.Counters
    let deliver: @Sendable (ConnectionID, String) -> Void
    let end: @Sendable (ConnectionID, WebSocketCloseCode, String) -> Void
    let answer: @Sendable (ConnectionID, UInt64, HTTPResponse) -> Void
    let log: ServerLog
    let epoll: Int32
    var upstreams: [ConnectionID: Upstream] = [:]
    var byTag: [UInt64: ConnectionID] = [:]
    var exchanges: [UInt64: Exchange] = [:]
    var exchangeTags: [HTTPExchangeKey: UInt64] = [:]
    var nextTag: UInt64 = 1
    var random = SystemRandomNumberGenerator()
    static let mailboxTag: UInt64 = 0

    init(
        mailbox: Mailbox<SignalingProxy.Command>, counters: SignalingProxy.Counters,
        deliver: @escaping @Sendable (ConnectionID, String) -> Void,
        end: @escaping @Sendable (ConnectionID, WebSocketCloseCode, String) -> Void,
        answer: @escaping @Sendable (ConnectionID, UInt64, HTTPResponse) -> Void, log: ServerLog
    ) {
        self.mailbox = mailbox
        self.counters = counters
        self.deliver = deliver
        self.end = end
        self.answer = answer
        self.log = log
        epoll = swiftlet_epoll_create()
        _ = swiftlet_epoll_add_readable(epoll, mailbox.eventDescriptor, Self.mailboxTag)
    }

    deinit { close(epoll) }

    func run() {
        var tags = [UInt64](repeating: 0, count: 128)
        var ready = [UInt32](repeating: 0, count: 128)
        var commands: [SignalingProxy.Command] = []
        while true {
            let now = MonotonicClock.now()
            let opens = upstreams.values.filter { $0.client.phase != .open }.map(\.openBy).min()
            let wait = [opens, exchanges.values.map(\.expiry).min()].compactMap { $0 }.min()
            let waitMs = wait.map { Int32(clamping: max(0, ($0 - now).nanoseconds) / 1_000_000 + 1) } ?? 1000
            let n = tags.withUnsafeMutableBufferPointer { t in
                ready.withUnsafeMutableBufferPointer { r in
                    swiftlet_epoll_wait_ready(epoll, t.baseAddress, r.baseAddress, Int32(t.count), min(waitMs, 1000))
                }
            }
            for i in 0..<Int(max(n, 0)) {
                if tags[i] == Self.mailboxTag {
                    mailbox.drain(into: &commands)
                    for command in commands {
                        if case .stop = command {
                            shutdown()
                            return
                        }
                        apply(command, now: MonotonicClock.now())
                    }
                    continue
                }
                let bits = ready[i]
                if let exchange = exchanges[tags[i]] {
                    serve(exchange, ready: bits)
                    continue
                }
                guard let connection = byTag[tags[i]], let upstream = upstreams[connection] else { continue }
                let events = upstream.client.handleReady(
                    readable: bits & SWIFTLET_READY_READABLE != 0, writable: bits & SWIFTLET_READY_WRITABLE != 0,
                    hangup: bits & SWIFTLET_READY_HANGUP != 0)
                handle(events, of: upstream)
            }
            expireSlowOpens(now: MonotonicClock.now())
            expireExchanges(now: MonotonicClock.now())
        }
    }

    private func apply(_ command: SignalingProxy.Command, now: Instant) {
        switch command {
        case .open(let connection, let box, let headers, let messages):
            if let old = upstreams[connection] { remove(old) }
            let client: SignalingClient
            do {
                client = try SignalingClient(to: box.endpoint, path: "/rtc", headers: headers, random: &random)
            } catch {
                counters.lost.add(1, ordering: .relaxed)
                end(connection, .serviceRestart, "the room's node cannot be reached: resume")
                log(.warning, "proxy: cannot connect to the room's node", [("conn", "\(connection)"), ("reason", "\(error)")])
                return
            }
            let tag = nextTag
            nextTag += 1
            let upstream = Upstream(
                client: client, connection: connection, tag: tag, held: messages,
                openBy: now + SignalingProxy.connectTimeout)
            upstreams[connection] = upstream
            byTag[tag] = connection
            counters.sessions.add(1, ordering: .relaxed)
            _ = swiftlet_epoll_add_interest(epoll, client.descriptor, tag, 1, 1)
        case .forward(let connection, let text):
            guard let upstream = upstreams[connection], !upstream.closing else { return }
            if upstream.client.phase == .open {
                upstream.client.send(text: text)
                counters.toHome.add(1, ordering: .relaxed)
                updateInterest(upstream)
            } else if upstream.held.count < SignalingProxy.maxHeldMessages {
                upstream.held.append(text)
            } else {
                lose(upstream, "the client sent too much before the room's node answered")
            }
        case .close(let connection, let code):
            guard let upstream = upstreams[connection] else { return }
            if let code, upstream.client.phase == .open {
                // A leave: the home node hears the same close code.
                // The frame goes to the kernel now; we do not wait for the
                // home's echo (nothing more would be relayed).
                upstream.closing = true
                upstream.client.close(code: code, reason: "client left")
                remove(upstream)
            } else {
                // Dropped: drop the TCP connection without a close frame,
                // so the home node keeps the participant for its grace
                // period, exactly as for a client that lost its network.
                remove(upstream)
            }
        case .exchange(let key, let box, let request, let deadline):
            start(request, for: key, to: box.endpoint, deadline: deadline, now: now)
        case .cancelExchange(let key):
            guard let tag = exchangeTags[key], let exchange = exchanges[tag] else { return }
            counters.httpCancelled.add(1, ordering: .relaxed)
            remove(exchange)
        case .stop:
            break
        }
    }

    private func handle(_ events: [SignalingClient.Event], of upstream: Upstream) {
        for event in events {
            switch event {
            case .opened:
                counters.opened.add(1, ordering: .relaxed)
                for text in upstream.held { upstream.client.send(text: text) }
                counters.toHome.add(upstream.held.count, ordering: .relaxed)
                upstream.held = []
            case .text(let text):
                counters.fromHome.add(1, ordering: .relaxed)
                deliver(upstream.connection, text)
            case .closed(let reason, let code):
                if upstream.closing {
                    remove(upstream)
                } else if let code {
                    // The home node closed the session on purpose (going
                    // away, replaced, policy): the client hears the same.
                    end(upstream.connection, code, "closed by the room's node")
                    remove(upstream)
                } else {
                    lose(upstream, reason)
                }
                return
            }
        }
        updateInterest(upstream)
    }

    /// The gap: the upstream ended without a close frame. The client's
    /// session ends cleanly with 1012 and it resumes.
    private func lose(_ upstream: Upstream, _ reason: String) {
        counters.lost.add(1, ordering: .relaxed)
        log(.warning, "proxy: lost the room's node", [("conn", "\(upstream.connection)"), ("reason", reason)])
        end(upstream.connection, .serviceRestart, "lost the room's node: resume")
        remove(upstream)
    }

    private func expireSlowOpens(now: Instant) {
        for upstream in Array(upstreams.values) where upstream.client.phase != .open && now >= upstream.openBy {
            lose(upstream, "no answer within \(SignalingProxy.connectTimeout)")
        }
    }

    private func updateInterest(_ upstream: Upstream) {
        let want = upstream.client.wantsWritable
        guard want != upstream.watchingWritable else { return }
        upstream.watchingWritable = want
        _ = swiftlet_epoll_modify_interest(epoll, upstream.client.descriptor, upstream.tag, 1, want ? 1 : 0)
    }

    private func remove(_ upstream: Upstream) {
        guard upstreams[upstream.connection] === upstream else { return }
        _ = swiftlet_epoll_remove(epoll, upstream.client.descriptor)
        upstreams[upstream.connection] = nil
        byTag[upstream.tag] = nil
        counters.sessions.subtract(1, ordering: .relaxed)
    }

    private func shutdown() {
        for upstream in Array(upstreams.values) {
            if upstream.client.phase == .open { upstream.client.close(code: .goingAway, reason: "node stopping") }
            remove(upstream)
        }
        for exchange in Array(exchanges.values) { remove(exchange) }
    }

    // MARK: WHIP/WHEP requests

    private func start(
        _ request: ForwardedHTTPRequest, for key: HTTPExchangeKey, to endpoint: ServerEndpoint, deadline: Instant,
        now: Instant
    ) {
        if let tag = exchangeTags[key], let old = exchanges[tag] { remove(old) }
        let node = endpoint.hostHeader
        let exchange: HTTPExchange
        do {
            exchange = try HTTPExchange(
                to: endpoint, method: request.method, path: request.target, headers: request.headerPairs,
                body: request.body)
        } catch {
            counters.httpFailed.add(1, ordering: .relaxed)
            log(.warning, "proxy: cannot connect to the room's node", [("conn", "\(key.connection)"), ("reason", "\(error)")])
            answer(key.connection, key.serial, HTTPSessionForwarding.badGateway("connect \(node): \(error)"))
            return
        }
        let tag = nextTag
        nextTag += 1
        let entry = Exchange(
            exchange: exchange, key: key, tag: tag, node: node, connectBy: now + SignalingProxy.connectTimeout,
            deadline: deadline)
        exchanges[tag] = entry
        exchangeTags[key] = tag
        counters.httpInFlight.add(1, ordering: .relaxed)
        _ = swiftlet_epoll_add_interest(epoll, exchange.descriptor, tag, 1, 1)
    }

    private func serve(_ entry: Exchange, ready bits: UInt32) {
        let outcome = entry.exchange.handleReady(
            readable: bits & SWIFTLET_READY_READABLE != 0, writable: bits & SWIFTLET_READY_WRITABLE != 0,
            hangup: bits & SWIFTLET_READY_HANGUP != 0)
        switch outcome {
        case .response(let head, let body)?:
            counters.httpRelayed.add(1, ordering: .relaxed)
            remove(entry)
            answer(entry.key.connection, entry.key.serial, HTTPSessionForwarding.relayed(head, body: body))
        case .failed(let reason)?:
            counters.httpFailed.add(1, ordering: .relaxed)
            remove(entry)
            log(.warning, "proxy: the room's node failed a request", [("conn", "\(entry.key.connection)"), ("reason", reason)])
            answer(entry.key.connection, entry.key.serial, HTTPSessionForwarding.badGateway("\(entry.node): \(reason)"))
        case nil:
            let want = entry.exchange.wantsWritable
            guard want != entry.watchingWritable else { return }
            entry.watchingWritable = want
            _ = swiftlet_epoll_modify_interest(epoll, entry.exchange.descriptor, entry.tag, 1, want ? 1 : 0)
        }
    }

    private func expireExchanges(now: Instant) {
        for entry in Array(exchanges.values) where now >= entry.expiry {
            remove(entry)
            if now >= entry.deadline {
                counters.httpTimedOut.add(1, ordering: .relaxed)
                log(.warning, "proxy: the room's node did not answer in time", [("conn", "\(entry.key.connection)")])
                answer(
                    entry.key.connection, entry.key.serial,
                    HTTPSessionForwarding.gatewayTimeout("the room's node \(entry.node) did not answer"))
            } else {
                counters.httpFailed.add(1, ordering: .relaxed)
                log(.warning, "proxy: no connection to the room's node in time", [("conn", "\(entry.key.connection)")])
                let why = "no connection to \(entry.node) within \(SignalingProxy.connectTimeout.compactDescription)"
                answer(entry.key.connection, entry.key.serial, HTTPSessionForwarding.badGateway(why))
            }
        }
    }

    private func remove(_ entry: Exchange) {
        guard exchanges[entry.tag] === entry else { return }
        _ = swiftlet_epoll_remove(epoll, entry.exchange.descriptor)
        exchanges[entry.tag] = nil
        exchangeTags[entry.key] = nil
        counters.httpInFlight.subtract(1, ordering: .relaxed)
    }
}
