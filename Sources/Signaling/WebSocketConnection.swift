/// What the shell learns from the bytes it fed a `WebSocketConnection`.
public enum WebSocketEvent: Equatable, Sendable {
    case text(String)
    case binary([UInt8])
    /// The answer to a ping; the shell may use it for liveness.
    case pong([UInt8])
    /// The connection is closed: flush `takeOutput()` and close the socket.
    /// `code` and `reason` are the peer's when it closed first, ours when we
    /// closed first or failed the connection.
    case closed(code: WebSocketCloseCode?, reason: String)
}

/// One server-side WebSocket connection after the handshake, sans-IO
/// (RFC 6455 sections 5 to 7): bytes in, events out, bytes to write
/// collected until the shell takes them.
///
/// Pings are answered with pongs at once (section 5.5.2). A close from the
/// peer is answered with a close and the connection is closed (section
/// 5.5.1); after `close(code:reason:)` it waits for the peer's close (the
/// shell times that wait out and closes the socket). A protocol error
/// fails the connection: a close frame with the error's code is queued and
/// the connection is closed at once (section 7.1.7). Keep-alive pings are
/// the shell's to schedule, through `sendPing`.
public struct WebSocketConnection: Sendable {
    public enum State: Equatable, Sendable {
        case open
        /// We sent a close and wait for the peer's.
        case closing
        case closed
    }

    public private(set) var state: State = .open
    private var decoder: WebSocketFrameDecoder
    private var output: [UInt8] = []

    public init(maxMessageBytes: Int = 1024 * 1024) {
        decoder = WebSocketFrameDecoder(maxMessageBytes: maxMessageBytes)
    }

    public var isClosed: Bool { state == .closed }

    /// Decodes `bytes` and returns what happened, in order. Bytes after the
    /// connection closed are ignored.
    public mutating func receive(_ bytes: [UInt8]) -> [WebSocketEvent] {
        guard state != .closed else { return [] }
        decoder.feed(bytes)
        var events: [WebSocketEvent] = []
        while state != .closed {
            let message: WebSocketMessage?
            do {
                message = try decoder.nextMessage()
            } catch {
                let reason = error.reason
                output += Self.closeFrame(code: error.closeCode, reason: reason)
                state = .closed
                events.append(.closed(code: error.closeCode, reason: reason))
                break
            }
            guard let message else { break }
            switch message {
            case .text(let text): events.append(.text(text))
            case .binary(let data): events.append(.binary(data))
            case .ping(let payload):
                if state == .open { output += WebSocketFrame(opcode: .pong, payload: payload).serialize() }
            case .pong(let payload): events.append(.pong(payload))
            case .close(let code, let reason):
                // Echo the peer's code (section 5.5.1) unless we already
                // sent our close.
                if state == .open {
                    output += Self.closeFrame(code: code, reason: "")
                }
                state = .closed
                events.append(.closed(code: code, reason: reason))
            }
        }
        return events
    }

    public mutating func send(text: String) {
        guard state == .open else { return }
        output += WebSocketFrame(opcode: .text, payload: Array(text.utf8)).serialize()
    }

    public mutating func send(binary: [UInt8]) {
        guard state == .open else { return }
        output += WebSocketFrame(opcode: .binary, payload: binary).serialize()
    }

    /// Queues a ping; its payload is cut to the 125 bytes a control frame
    /// may carry.
    public mutating func sendPing(_ payload: [UInt8] = []) {
        guard state == .open else { return }
        output += WebSocketFrame(opcode: .ping, payload: Array(payload.prefix(125))).serialize()
    }

    /// Starts the closing handshake: queues a close frame and waits for the
    /// peer's. Data messages that arrive meanwhile are still reported.
    public mutating func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        guard state == .open else { return }
        output += Self.closeFrame(code: code, reason: reason)
        state = .closing
    }

    /// The bytes to write, in order; empties the queue.
    public mutating func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    /// A close frame; the reason is cut at a character boundary so the
    /// payload stays within 125 bytes.
    static func closeFrame(code: WebSocketCloseCode?, reason: String) -> [UInt8] {
        guard let code, code.isValidOnTheWire else { return WebSocketFrame(opcode: .close, payload: []).serialize() }
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        for character in reason {
            let utf8 = Array(String(character).utf8)
            guard payload.count + utf8.count <= 125 else { break }
            payload += utf8
        }
        return WebSocketFrame(opcode: .close, payload: payload).serialize()
    }
}
