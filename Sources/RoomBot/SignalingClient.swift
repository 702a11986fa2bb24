import NetIO
import Signaling
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// One bot's room WebSocket: a non-blocking TCP connect, the opening
/// handshake, then JSON text messages. Driven by the bot loop's epoll:
/// `handleReady` when the socket is readable or writable; the events it
/// returns are the server's messages.
final class SignalingClient {
    enum Phase: Equatable {
        case connecting, handshaking, open, closed
    }

    enum Event: Equatable {
        /// The 101 arrived: the room protocol may start.
        case opened
        case text(String)
        case closed(reason: String)
    }

    let socket: TCPClientSocket
    private(set) var phase = Phase.connecting
    private let handshake: WebSocketClientHandshake
    private var connection: WebSocketClientConnection
    private var inbound: [UInt8] = []
    private var outbound: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    init(to address: SocketAddress, host: String, path: String, random: inout SystemRandomNumberGenerator) throws(SocketError) {
        socket = try TCPClientSocket(connectingTo: address)
        var nonce = [UInt8](repeating: 0, count: 16)
        for i in nonce.indices { nonce[i] = UInt8.random(in: 0...255, using: &random) }
        handshake = WebSocketClientHandshake(host: host, path: path, nonce: nonce)
        // A fresh unpredictable key per frame (RFC 6455 section 5.3).
        connection = WebSocketClientConnection(maskingKey: {
            var g = SystemRandomNumberGenerator()
            return UInt32.random(in: 0...UInt32.max, using: &g)
        })
        if socket.initialProgress == .connected { startHandshake() }
    }

    var descriptor: Int32 { socket.descriptor }
    /// Whether epoll should report writability: while connecting, or with
    /// bytes the kernel has not taken yet.
    var wantsWritable: Bool { phase == .connecting || !outbound.isEmpty }

    func send(text: String) {
        guard phase == .open else { return }
        connection.send(text: text)
        outbound += connection.takeOutput()
        flush()
    }

    func close() {
        guard phase == .open else { return }
        connection.close(code: .goingAway, reason: "roombot done")
        outbound += connection.takeOutput()
        flush()
    }

    func handleReady(readable: Bool, writable: Bool, hangup: Bool) -> [Event] {
        var events: [Event] = []
        if phase == .connecting, writable || hangup {
            switch socket.finishConnect() {
            case .inProgress: return []
            case .connected: startHandshake()
            case .failed(let e): return fail("connect \(socket.remote): \(String(cString: strerror(e)))")
            }
        }
        if readable || hangup { events += read() }
        if phase != .closed { flush() }
        return events
    }

    private func startHandshake() {
        phase = .handshaking
        outbound += handshake.requestBytes
        flush()
    }

    private func read() -> [Event] {
        var events: [Event] = []
        while phase != .closed {
            let result = buffer.withUnsafeMutableBytes { socket.stream.receive(into: $0) }
            switch result {
            case .bytes(let n): events += consume(Array(buffer[0..<n]))
            case .wouldBlock: return events
            case .endOfStream: return events + fail("server closed the connection")
            case .failed(let e): return events + fail("read: errno \(e)")
            }
        }
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
                outbound += connection.takeOutput()
                flush()
                phase = .closed
                events.append(.closed(reason: "websocket closed \(code.map { String($0.rawValue) } ?? "-") \(reason)"))
            }
        }
        outbound += connection.takeOutput()
        return events
    }

    private func flush() {
        while !outbound.isEmpty {
            let r = outbound.withUnsafeBytes { socket.stream.send($0) }
            switch r {
            case .bytes(let n): outbound.removeFirst(n)
            case .wouldBlock, .endOfStream: return
            case .failed: outbound = []; return
            }
        }
    }

    private func fail(_ reason: String) -> [Event] {
        phase = .closed
        outbound = []
        return [.closed(reason: reason)]
    }
}
