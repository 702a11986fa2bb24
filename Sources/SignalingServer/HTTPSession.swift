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
/// closed when nothing arrives for `webSocketTimeout`.
final class HTTPSession: TCPConnectionHandler {
    struct Timeouts: Sendable {
        var requestTimeout: Duration = .seconds(10)
        var idleTimeout: Duration = .seconds(60)
        var pingInterval: Duration = .seconds(15)
        var webSocketTimeout: Duration = .seconds(45)
    }

    private enum Mode {
        case http(HTTPRequestParser)
        case webSocket(WebSocketConnection)
    }

    private let id: ConnectionID
    private let router: HTTPRouter
    private let service: RoomService
    private let timeouts: Timeouts
    private var mode = Mode.http(HTTPRequestParser())
    private var lastActivity: Instant
    private var requestStarted: Instant?
    private var lastPing: Instant

    init(id: ConnectionID, router: HTTPRouter, service: RoomService, timeouts: Timeouts, now: Instant) {
        self.id = id
        self.router = router
        self.service = service
        self.timeouts = timeouts
        lastActivity = now
        lastPing = now
    }

    func received(_ bytes: UnsafeRawBufferPointer, now: Instant) -> TCPConnectionAction {
        lastActivity = now
        switch mode {
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
                if request.path == "/rtc" {
                    do {
                        let response = try WebSocketHandshake.response(to: request)
                        let leftover = parser.takeBufferedBytes()
                        mode = .webSocket(WebSocketConnection())
                        service.opened(id)
                        lastPing = now
                        var action = TCPConnectionAction.send(out + response.serialize())
                        if !leftover.isEmpty {
                            let more = leftover.withUnsafeBytes { received($0, now: now) }
                            action.send += more.send
                            action.close = more.close
                        }
                        return action
                    } catch {
                        mode = .http(parser)
                        return .sendThenClose(out + error.response.serialize())
                    }
                }
                let response = router.respond(to: request, now: now)
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
            let events = socket.receive(Array(bytes))
            var close = TCPConnectionAction.Close.none
            for event in events {
                switch event {
                case .text(let text): service.received(text: text, on: id, now: now)
                case .binary: socket.close(code: .unsupportedData, reason: "the room protocol is JSON text")
                case .pong: break
                case .closed: close = .afterSend
                }
            }
            let output = socket.takeOutput()
            mode = .webSocket(socket)
            return TCPConnectionAction(send: output, close: close)
        }
    }

    func timeout(now: Instant) -> TCPConnectionAction {
        switch mode {
        case .http:
            if let started = requestStarted, now - started >= timeouts.requestTimeout {
                return .sendThenClose(HTTPResponse(status: 408, headers: HTTPHeaders([("Connection", "close")])).serialize())
            }
            if now - lastActivity >= timeouts.idleTimeout { return .closeNow }
            return .none
        case .webSocket(var socket):
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
        case .http:
            if let started = requestStarted { return min(started + timeouts.requestTimeout, lastActivity + timeouts.idleTimeout) }
            return lastActivity + timeouts.idleTimeout
        case .webSocket:
            return min(lastPing + timeouts.pingInterval, lastActivity + timeouts.webSocketTimeout)
        }
    }

    func closed(_ reason: TCPCloseReason) {
        if case .webSocket = mode { service.closed(id, now: MonotonicClock.now()) }
        // Why a browser could not connect over HTTPS is worth a line in dev mode.
        if case .tlsFailed(let why) = reason { service.log(.debug, "\(id): TLS: \(why)") }
    }
}
