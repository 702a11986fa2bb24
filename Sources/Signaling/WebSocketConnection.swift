/// What the shell learns from the bytes it fed a `WebSocketConnection`.
package enum WebSocketEvent: Equatable, Sendable {
    case text(String)
    case binary([UInt8])
    /// The answer to a ping; the shell may use it for liveness.
    case pong([UInt8])
    /// The connection is closed: flush `takeOutput()` and close the socket.
    /// `code` and `reason` are the peer's when it closed first, ours when we
    /// closed first or failed the connection.
    case closed(code: WebSocketCloseCode?, reason: String)
}

/// How one side of a WebSocket writes its frames (RFC 6455 section 5.3):
/// a server sends them unmasked and reads masked ones; a client masks
/// every frame with a fresh key and reads unmasked ones.
package protocol WebSocketFraming {
    /// Whose frames this side decodes.
    static var peer: WebSocketRole { get }
    mutating func serialize(_ frame: WebSocketFrame) -> [UInt8]
}

/// The server's side: frames go out unmasked.
package struct ServerFraming: WebSocketFraming, Sendable {
    package static let peer = WebSocketRole.client
    package init() {}
    package func serialize(_ frame: WebSocketFrame) -> [UInt8] { frame.serialize() }
}

/// The client's side: every frame is masked with a fresh 32-bit key from
/// `maskingKey`, which the caller backs with a strong random source
/// (section 5.3: the key must be unpredictable, so a proxy cannot be fed
/// chosen bytes).
package struct ClientFraming: WebSocketFraming {
    package static let peer = WebSocketRole.server
    let maskingKey: () -> UInt32
    package init(maskingKey: @escaping () -> UInt32) { self.maskingKey = maskingKey }
    package func serialize(_ frame: WebSocketFrame) -> [UInt8] { frame.serialize(maskingKey: maskingKey()) }
}

/// One WebSocket connection after the handshake, sans-IO (RFC 6455
/// sections 5 to 7): bytes in, events out, bytes to write collected until
/// the shell takes them. The server's is `WebSocketConnection`, the
/// client's `WebSocketClientConnection`; they differ only in `Framing`
/// (frames from a peer that masks the wrong way fail the connection,
/// section 5.1).
///
/// Pings are answered with pongs at once (section 5.5.2). A close from the
/// peer is answered with a close and the connection is closed (section
/// 5.5.1); after `close(code:reason:)` it waits for the peer's close (the
/// shell times that wait out and closes the socket). A protocol error
/// fails the connection: a close frame with the error's code is queued and
/// the connection is closed at once (section 7.1.7). Keep-alive pings are
/// the shell's to schedule, through `sendPing`.
package struct WebSocketEndpoint<Framing: WebSocketFraming> {
    package enum State: Equatable, Sendable {
        case open
        /// We sent a close and wait for the peer's.
        case closing
        case closed
    }

    package private(set) var state: State = .open
    private var decoder: WebSocketFrameDecoder
    private var framing: Framing
    private var output: [UInt8] = []

    package init(maxMessageBytes: Int = 1024 * 1024, framing: Framing) {
        decoder = WebSocketFrameDecoder(maxMessageBytes: maxMessageBytes, decodingFramesFrom: Framing.peer)
        self.framing = framing
    }

    package var isClosed: Bool { state == .closed }

    /// Bytes received and held for messages not complete yet.
    package var heldByteCount: Int { decoder.heldByteCount }

    /// Decodes `bytes` and returns what happened, in order. Bytes after the
    /// connection closed are ignored.
    package mutating func receive(_ bytes: [UInt8]) -> [WebSocketEvent] {
        guard state != .closed else { return [] }
        decoder.feed(bytes)
        var events: [WebSocketEvent] = []
        while state != .closed {
            let message: WebSocketMessage?
            do {
                message = try decoder.nextMessage()
            } catch {
                let reason = error.reason
                queueClose(code: error.closeCode, reason: reason)
                state = .closed
                events.append(.closed(code: error.closeCode, reason: reason))
                break
            }
            guard let message else { break }
            switch message {
            case .text(let text): events.append(.text(text))
            case .binary(let data): events.append(.binary(data))
            case .ping(let payload):
                if state == .open { queue(.pong, payload) }
            case .pong(let payload): events.append(.pong(payload))
            case .close(let code, let reason):
                // Echo the peer's code (section 5.5.1) unless we already
                // sent our close.
                if state == .open { queueClose(code: code, reason: "") }
                state = .closed
                events.append(.closed(code: code, reason: reason))
            }
        }
        return events
    }

    package mutating func send(text: String) {
        guard state == .open else { return }
        queue(.text, Array(text.utf8))
    }

    package mutating func send(binary: [UInt8]) {
        guard state == .open else { return }
        queue(.binary, binary)
    }

    /// Queues a ping; its payload is cut to the 125 bytes a control frame
    /// may carry.
    package mutating func sendPing(_ payload: [UInt8] = []) {
        guard state == .open else { return }
        queue(.ping, Array(payload.prefix(125)))
    }

    /// Starts the closing handshake: queues a close frame and waits for the
    /// peer's. Data messages that arrive meanwhile are still reported.
    package mutating func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        guard state == .open else { return }
        queueClose(code: code, reason: reason)
        state = .closing
    }

    /// The bytes to write, in order; empties the queue.
    package mutating func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    private mutating func queue(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        output += framing.serialize(WebSocketFrame(opcode: opcode, payload: payload))
    }

    /// A close frame; the reason is cut at a character boundary so the
    /// payload stays within 125 bytes.
    private mutating func queueClose(code: WebSocketCloseCode?, reason: String) {
        guard let code, code.isValidOnTheWire else { return queue(.close, []) }
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        for character in reason {
            let utf8 = Array(String(character).utf8)
            guard payload.count + utf8.count <= 125 else { break }
            payload += utf8
        }
        queue(.close, payload)
    }
}

extension WebSocketEndpoint: Sendable where Framing: Sendable {}

/// The server side of a WebSocket connection.
package typealias WebSocketConnection = WebSocketEndpoint<ServerFraming>

extension WebSocketEndpoint where Framing == ServerFraming {
    package init(maxMessageBytes: Int = 1024 * 1024) { self.init(maxMessageBytes: maxMessageBytes, framing: ServerFraming()) }
}

/// The client side (roombot): every frame masked, pings answered, a close
/// from the server echoed, as on the server side.
package typealias WebSocketClientConnection = WebSocketEndpoint<ClientFraming>

extension WebSocketEndpoint where Framing == ClientFraming {
    package init(maxMessageBytes: Int = 1024 * 1024, maskingKey: @escaping () -> UInt32) {
        self.init(maxMessageBytes: maxMessageBytes, framing: ClientFraming(maskingKey: maskingKey))
    }
}
