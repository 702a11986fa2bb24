import NetIO
import Signaling
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// One bot's room WebSocket (`ws://` or, over TLS, `wss://`): a
/// non-blocking TCP connect, the opening handshake, then JSON text
/// messages. Driven by the bot loop's epoll:
/// `handleReady` when the socket is readable or writable; the events it
/// returns are the server's messages.
package final class SignalingClient {
    package enum Phase: Equatable {
        case connecting, handshaking, open, closed
    }

    package enum Event: Equatable {
        /// The 101 arrived: the room protocol may start.
        case opened
        case text(String)
        /// `code`: the server's close frame's status, nil when the stream
        /// ended without one (or before the WebSocket opened).
        case closed(reason: String, code: WebSocketCloseCode? = nil)
    }

    package let stream: ClientStream
    package private(set) var phase = Phase.connecting
    private let handshake: WebSocketClientHandshake
    private var connection: WebSocketClientConnection
    private var inbound: [UInt8] = []

    /// `headers`: more headers for the upgrade request.
    package init(
        to endpoint: ServerEndpoint, path: String, headers: HTTPHeaders = HTTPHeaders(),
        random: inout SystemRandomNumberGenerator
    ) throws(SocketError) {
        stream = try ClientStream(to: endpoint)
        let host = endpoint.hostHeader
        var nonce = [UInt8](repeating: 0, count: 16)
        for i in nonce.indices { nonce[i] = UInt8.random(in: 0...255, using: &random) }
        handshake = WebSocketClientHandshake(host: host, path: path, nonce: nonce, headers: headers)
        // A fresh unpredictable key per frame (RFC 6455 section 5.3).
        connection = WebSocketClientConnection(maskingKey: {
            var g = SystemRandomNumberGenerator()
            return UInt32.random(in: 0...UInt32.max, using: &g)
        })
        if stream.connected { startHandshake() }
    }

    package var descriptor: Int32 { stream.descriptor }
    /// Whether epoll should report writability: while connecting, or with
    /// bytes the kernel has not taken yet.
    package var wantsWritable: Bool { phase == .connecting || stream.hasUnsent }

    package func send(text: String) {
        guard phase == .open else { return }
        connection.send(text: text)
        stream.write(connection.takeOutput())
    }

    package func close(code: WebSocketCloseCode = .goingAway, reason: String = "roombot done") {
        guard phase == .open else { return }
        connection.close(code: code, reason: reason)
        stream.write(connection.takeOutput())
        stream.shutdown()
    }

    package func handleReady(readable: Bool, writable: Bool, hangup: Bool) -> [Event] {
        var events: [Event] = []
        if phase == .connecting, writable || hangup {
            switch stream.finishConnect() {
            case .inProgress: return []
            case .connected: startHandshake()
            case .failed(let e): return fail("connect \(stream.socket.remote): \(String(cString: strerror(e)))")
            }
        }
        if readable || hangup { events += read() }
        if phase != .closed { stream.flush() }
        return events
    }

    private func startHandshake() {
        phase = .handshaking
        stream.write(handshake.requestBytes)
    }

    private func read() -> [Event] {
        let outcome = stream.read()
        var events = outcome.plaintext.isEmpty ? [] : consume(outcome.plaintext)
        if let ended = outcome.ended, phase != .closed { events += fail(ended) }
        return events
    }

    private func consume(_ bytes: [UInt8]) -> [Event] {
        var events: [Event] = []
        var frames = bytes
        if phase == .handshaking {
            inbound += bytes
            let length: Int?
            do {
                length = try handshake.receiveResponse(inbound.span.bytes)
            } catch {
                if case .notSwitchingProtocols(let status) = error { return fail("HTTP \(status) on \(handshake.path)") }
                return fail("handshake: \(error)")
            }
            guard let length else { return [] }
            frames = Array(inbound[length...])
            inbound = []
            phase = .open
            events.append(.opened)
        }
        guard phase == .open, !frames.isEmpty else { return events }
        for e in connection.receive(frames) {
            switch e {
            case .text(let t): events.append(.text(t))
            case .binary, .pong: break
            case .closed(let code, let reason):
                stream.write(connection.takeOutput())
                phase = .closed
                events.append(
                    .closed(reason: "websocket closed \(code.map { String($0.rawValue) } ?? "-") \(reason)", code: code))
            }
        }
        stream.write(connection.takeOutput())
        return events
    }

    private func fail(_ reason: String) -> [Event] {
        phase = .closed
        return [.closed(reason: reason)]
    }
}
