import NetIO
import Rooms
import Signaling
import Wire

/// One TCP connection of the signalling server: HTTP/1.1 requests until a
/// WebSocket upgrade on `/rtc`, then room protocol messages. Sans-IO
/// towards the socket: the TCP shell feeds bytes and sends what this
/// returns. Runs on the TCP server's thread.
///
/// Time limits: an HTTP request must complete within `requestTimeout` of
/// its first byte (slow clients); an idle keep-alive connection closes
/// after `idleTimeout`; a WebSocket is pinged every `pingInterval` and
/// closed when nothing arrives for `webSocketTimeout`. A WebSocket that has
/// not joined a room `joinTimeout` after the upgrade is closed with 1008
/// (policy violation, RFC 6455 section 7.4.1): an open socket is not a
/// free seat.
///
/// In a cluster a WHIP/WHEP request may wait for its room's placement and
/// the room's node (`HTTPSessionRoutes.clusterStep`): the session stops
/// parsing (later pipelined bytes stay buffered, at most one request's
/// worth), its answer is posted back to this loop (`answerDeferred`), and
/// past the request timeout, counted from the request's first byte, the
/// client gets 504 and the next request is served.
final class HTTPSession: TCPConnectionHandler {
    struct Timeouts: Sendable {
        var requestTimeout: Duration = .seconds(10)
        var idleTimeout: Duration = .seconds(60)
        var pingInterval: Duration = .seconds(15)
        var webSocketTimeout: Duration = .seconds(45)
        var joinTimeout: Duration = .seconds(10)
    }

    /// A request waiting for an answer from another thread.
    private struct Deferred {
        let request: HTTPRequest
        let serial: UInt64
        let deadline: Instant
    }

    private enum Mode {
        case http(HTTPRequestParser)
        /// Waiting for `Deferred`'s answer; nothing more is parsed.
        case waiting(HTTPRequestParser, Deferred)
        case webSocket(WebSocketConnection)
    }

    private let id: ConnectionID
    /// The peer's address as accept reported it.
    private let peer: SocketAddress?
    /// Who the log names and the limits count: the peer, or behind a
    /// trusted proxy the client it forwarded the request for.
    private var remote: SocketAddress?
    private let forwarded: ForwardedClientAdmission?
    /// Behind a trusted proxy: the client this room WebSocket holds a
    /// connection of (`ForwardedClientAdmission`), released at close.
    private var admittedClient: SocketAddress??
    private let router: HTTPRouter
    private let service: RoomService
    private let inputBudget: ServerInputBudget?
    /// What this connection holds in `inputBudget` now.
    private var heldInput = 0
    private let timeouts: Timeouts
    private var mode: Mode
    private var lastActivity: Instant
    private var requestStarted: Instant?
    private var lastPing: Instant
    /// The rooms layer was told this WebSocket closed (once).
    private var reportedClosed = false
    /// Until the WebSocket is seen joined: when it must have joined by.
    private var joinDeadline: Instant?
    /// The serial of the last request deferred on this connection.
    private var deferredSerial: UInt64 = 0

    init(
        id: ConnectionID, remote: SocketAddress? = nil, forwarded: ForwardedClientAdmission? = nil,
        inputBudget: ServerInputBudget? = nil, router: HTTPRouter, service: RoomService, timeouts: Timeouts, now: Instant
    ) {
        self.inputBudget = inputBudget
        self.id = id
        self.peer = remote
        self.remote = remote
        self.forwarded = forwarded.flatMap { $0.isProxy(remote) ? $0 : nil }
        self.router = router
        self.service = service
        self.timeouts = timeouts
        // The largest body any route takes is an SDP offer: a connection
        // buffers no more than that (docs/SECURITY.md), not the parser's
        // generic 1 MiB.
        mode = .http(HTTPRequestParser(limits: .init(maxBodyBytes: service.limits.sdpBytes)))
        lastActivity = now
        lastPing = now
    }

    func received(_ bytes: UnsafeRawBufferPointer, now: Instant) -> TCPConnectionAction {
        withinInputBudget(handle(bytes, now: now))
    }

    /// `action`, after the server's input budget took what this
    /// connection holds now.
    private func withinInputBudget(_ action: TCPConnectionAction) -> TCPConnectionAction {
        guard let inputBudget else { return action }
        let held: Int
        switch mode {
        case .http(let parser), .waiting(let parser, _): held = parser.bufferedByteCount
        case .webSocket(let socket): held = socket.heldByteCount
        }
        let fits = inputBudget.update(from: heldInput, to: held)
        heldInput = held
        if fits || action.close == .now { return action }
        // Over the server's input budget: this connection's partial
        // request or message goes, and so does the connection.
        _ = inputBudget.update(from: held, to: 0)
        heldInput = 0
        service.log(
            .warning, "connection closed: server input budget",
            [
                ("conn", id.description), ("remote", remote.map { "\($0)" } ?? "-"), ("held", "\(held)"),
                ("limit", "\(inputBudget.limit)"),
            ])
        switch mode {
        case .http(let parser), .waiting(let parser, _):
            if case .waiting(_, let deferred) = mode {
                service.cancelHTTP(HTTPExchangeKey(connection: id, serial: deferred.serial))
            }
            mode = .http(HTTPRequestParser(limits: parser.limits))
            let refusal = HTTPResponse(
                status: 503, headers: HTTPHeaders([("Retry-After", "1"), ("Connection", "close")]),
                body: Array("the server is holding too much input; try again\n".utf8))
            return .sendThenClose(action.send + refusal.serialize())
        case .webSocket(var socket):
            socket.close(code: .tryAgainLater, reason: "server input budget")
            mode = .webSocket(socket)
            return TCPConnectionAction(send: action.send + socket.takeOutput(), close: .afterSend)
        }
    }

    private func handle(_ bytes: UnsafeRawBufferPointer, now: Instant) -> TCPConnectionAction {
        lastActivity = now
        switch mode {
        case .waiting(var parser, let deferred):
            parser.feed(Array(bytes))
            let limit = parser.limits.maxHeaderSectionBytes + parser.limits.maxBodyBytes
            mode = .waiting(parser, deferred)
            guard parser.bufferedByteCount > limit else { return .none }
            service.log(
                .warning, "connection closed: too much pipelined behind a waiting request",
                [("conn", id.description), ("remote", remote.map { "\($0)" } ?? "-"), ("held", "\(parser.bufferedByteCount)")])
            mode = .http(HTTPRequestParser(limits: parser.limits))
            service.cancelHTTP(HTTPExchangeKey(connection: id, serial: deferred.serial))
            return .closeNow
        case .http(var parser):
            parser.feed(Array(bytes))
            var out: [UInt8] = []
            while true {
                let request: HTTPRequest?
                do {
                    request = try parser.nextRequest()
                } catch {
                    mode = .http(parser)
                    return .sendThenClose(out + error.response.serialize())
                }
                guard let request else { break }
                if let refusal = router.hostRefusal(request) {
                    mode = .http(parser)
                    return .sendThenClose(out + refusal.serialize(omittingBody: request.method == "HEAD"))
                }
                // Behind a trusted proxy each request is its client's: the
                // per-address limits count that client, and a refusal costs
                // this request only, not the proxy's connection.
                if let forwarded {
                    remote = forwarded.client(of: request, peer: peer)
                    let verdict = forwarded.admit(remote, now: now)
                    guard verdict == .admit else {
                        service.log(
                            .warning, "request refused",
                            [
                                ("conn", id.description), ("remote", remote.map { "\($0)" } ?? "-"),
                                ("via", peer.map { "\($0)" } ?? "-"),
                                ("reason", verdict == .rateLimited ? "connection rate" : "too many connections from address"),
                            ])
                        out += Self.forwardedRefusal.serialize(omittingBody: request.method == "HEAD")
                        if !request.keepAlive {
                            mode = .http(parser)
                            return .sendThenClose(out)
                        }
                        continue
                    }
                    if request.path == "/rtc" { admittedClient = .some(remote) } else { forwarded.release(remote) }
                }
                // Draining: no new room connections (a resume too would
                // end at the deadline; the client should go elsewhere).
                if request.path == "/rtc", let refusal = service.refusalOfNewSessions(now: now) {
                    releaseForwardedClient()
                    out += refusal.serialize(omittingBody: request.method == "HEAD")
                    if !request.keepAlive {
                        mode = .http(parser)
                        return .sendThenClose(out)
                    }
                    continue
                }
                if request.path == "/rtc" {
                    do {
                        let response = try WebSocketHandshake.response(to: request)
                        let leftover = parser.takeBufferedBytes()
                        mode = .webSocket(WebSocketConnection())
                        service.opened(id, remote: remote)
                        if let via = request.headers[SignalingProxy.viaHeader] {
                            service.arrived(id, via: via, epoch: request.headers[SignalingProxy.epochHeader])
                        }
                        lastPing = now
                        joinDeadline = now + timeouts.joinTimeout
                        var action = TCPConnectionAction.send(out + response.serialize())
                        if !leftover.isEmpty {
                            let more = leftover.withUnsafeBytes { handle($0, now: now) }
                            action.send += more.send
                            action.close = more.close
                        }
                        return action
                    } catch {
                        releaseForwardedClient()
                        mode = .http(parser)
                        return .sendThenClose(out + error.response.serialize())
                    }
                }
                let step: HTTPSessionRoutes.ClusterStep =
                    service.cluster == nil
                    ? .local : HTTPSessionRoutes(service: service, remote: remote).clusterStep(for: request, now: now)
                let response: HTTPResponse
                switch step {
                case .local: response = router.respond(to: request, remote: remote, now: now)
                case .answer(let refusal): response = refusal
                case .place(let room):
                    // The request's first byte started its timeout.
                    deferredSerial += 1
                    let deferred = Deferred(
                        request: request, serial: deferredSerial, deadline: (requestStarted ?? now) + timeouts.requestTimeout)
                    requestStarted = nil
                    mode = .waiting(parser, deferred)
                    service.placeHTTP(
                        request, room: room, key: HTTPExchangeKey(connection: id, serial: deferred.serial),
                        deadline: deferred.deadline, remote: remote)
                    return .send(out)
                }
                out += response.serialize(omittingBody: request.method == "HEAD")
                if !request.keepAlive {
                    mode = .http(parser)
                    return .sendThenClose(out)
                }
            }
            requestStarted = parser.hasIncompleteRequest ? (requestStarted ?? now) : nil
            mode = .http(parser)
            return .send(out)
        case .webSocket(var socket):
            // A close that arrives while we are open is the client's own;
            // one after ours (state closing) only echoes our code.
            let openBefore = socket.state == .open
            let events = socket.receive(Array(bytes))
            var close = TCPConnectionAction.Close.none
            for event in events {
                switch event {
                case .text(let text): service.received(text: text, on: id, now: now)
                case .binary: socket.close(code: .unsupportedData, reason: "the room protocol is JSON text")
                case .pong: break
                case .closed(let code, _):
                    // A close the client started with 1000/1001 is a leave
                    // (docs/PROTOCOL.md); our own close echoed back is not.
                    if openBefore { service.closedByClient(id, code: code, now: now) }
                    close = .afterSend
                    // The closing handshake is over: the session ends now,
                    // not when the TCP linger does.
                    reportClosed(now: now)
                }
            }
            let output = socket.takeOutput()
            mode = .webSocket(socket)
            return TCPConnectionAction(send: output, close: close)
        }
    }

    /// The answer of the request deferred as `serial` (posted from the
    /// placement queue or the proxy): it is written, then the requests
    /// pipelined meanwhile are served. An answer that finds no such
    /// request (timed out, refused) is dropped.
    func answerDeferred(serial: UInt64, _ answer: DeferredHTTPAnswer, now: Instant) -> TCPConnectionAction {
        guard case .waiting(let parser, let deferred) = mode, deferred.serial == serial else { return .none }
        let response: HTTPResponse
        switch answer {
        case .local: response = router.respond(to: deferred.request, remote: remote, now: now)
        case .response(let relayed): response = relayed
        }
        return withinInputBudget(resume(parser, after: deferred, with: response, now: now))
    }

    private func resume(
        _ parser: HTTPRequestParser, after deferred: Deferred, with response: HTTPResponse, now: Instant
    ) -> TCPConnectionAction {
        mode = .http(parser)
        // The cluster's own refusals (502, 503, 504) are text; the server
        // API answers JSON errors whoever writes them.
        let response = ServerAPIRoute.isAPI(deferred.request.path) ? ServerAPIRoute.jsonError(from: response) : response
        let bytes = response.serialize(omittingBody: deferred.request.method == "HEAD")
        guard deferred.request.keepAlive else { return .sendThenClose(bytes) }
        var action = [UInt8]().withUnsafeBytes { handle($0, now: now) }
        action.send = bytes + action.send
        return action
    }

    /// The drain's end: a room WebSocket starts the closing handshake with
    /// 1001 going away (RFC 6455 section 7.4.1); the TCP connection closes
    /// when the client's close arrives (or at the server's stop). Plain
    /// HTTP connections are left to finish their request.
    func goAway() -> TCPConnectionAction {
        guard case .webSocket(var socket) = mode else { return .none }
        socket.close(code: .goingAway, reason: "server shutting down")
        mode = .webSocket(socket)
        return .send(socket.takeOutput())
    }

    func timeout(now: Instant) -> TCPConnectionAction {
        switch mode {
        case .waiting(let parser, let deferred):
            guard now >= deferred.deadline else { return .none }
            service.log(
                .warning, "HTTP request timed out waiting for the room's node",
                [("conn", id.description), ("remote", remote.map { "\($0)" } ?? "-"), ("method", deferred.request.method)]
                    + [("timeout", timeouts.requestTimeout.compactDescription)])
            service.cancelHTTP(HTTPExchangeKey(connection: id, serial: deferred.serial))
            let response = HTTPSessionForwarding.gatewayTimeout(
                "the room's placement or node took more than \(timeouts.requestTimeout.compactDescription)")
            return withinInputBudget(resume(parser, after: deferred, with: response, now: now))
        case .http:
            if let started = requestStarted, now - started >= timeouts.requestTimeout {
                return .sendThenClose(HTTPResponse(status: 408, headers: HTTPHeaders([("Connection", "close")])).serialize())
            }
            if now - lastActivity >= timeouts.idleTimeout { return .closeNow }
            return .none
        case .webSocket(var socket):
            if let deadline = joinDeadline, now >= deadline {
                joinDeadline = nil
                if !service.hasJoinedOrIsPlaced(id), socket.state == .open {
                    service.log(
                        .warning, "WebSocket closed: no join in time",
                        [("conn", id.description)] + (remote.map { [("remote", "\($0)")] } ?? []) + [
                            ("timeout", timeouts.joinTimeout.compactDescription)
                        ])
                    socket.close(code: .policyViolation, reason: "no join within \(timeouts.joinTimeout.compactDescription)")
                    mode = .webSocket(socket)
                    return .sendThenClose(socket.takeOutput())
                }
            }
            if now - lastActivity >= timeouts.webSocketTimeout {
                socket.close(code: .goingAway, reason: "no traffic")
                mode = .webSocket(socket)
                return .sendThenClose(socket.takeOutput())
            }
            if now - lastPing >= timeouts.pingInterval {
                lastPing = now
                socket.sendPing()
            }
            let output = socket.takeOutput()
            mode = .webSocket(socket)
            return .send(output)
        }
    }

    func nextDeadline() -> Instant? {
        switch mode {
        case .waiting(_, let deferred): return deferred.deadline
        case .http:
            if let started = requestStarted { return min(started + timeouts.requestTimeout, lastActivity + timeouts.idleTimeout) }
            return lastActivity + timeouts.idleTimeout
        case .webSocket:
            let next = min(lastPing + timeouts.pingInterval, lastActivity + timeouts.webSocketTimeout)
            return joinDeadline.map { min($0, next) } ?? next
        }
    }

    func closed(_ reason: TCPCloseReason) {
        if case .webSocket = mode { reportClosed(now: MonotonicClock.now()) }
        if case .waiting(_, let deferred) = mode { service.cancelHTTP(HTTPExchangeKey(connection: id, serial: deferred.serial)) }
        releaseForwardedClient()
        _ = inputBudget?.update(from: heldInput, to: 0)
        heldInput = 0
        // Why a browser could not connect over HTTPS is worth a line in dev mode.
        if case .tlsFailed(let why) = reason { service.log(.debug, "TLS connection failed: \(why)", [("connection", "\(id)")]) }
    }

    /// 429 with Retry-After (RFC 6585 section 4), as at accept.
    private static let forwardedRefusal = HTTPResponse(
        status: 429, headers: HTTPHeaders([("Retry-After", "1"), ("Content-Type", "text/plain")]),
        body: Array("too many connections from your address\n".utf8))

    private func releaseForwardedClient() {
        guard let forwarded, case .some(let client) = admittedClient else { return }
        admittedClient = nil
        forwarded.release(client)
    }

    private func reportClosed(now: Instant) {
        guard !reportedClosed else { return }
        reportedClosed = true
        service.closed(id, now: now)
    }
}
