/// One client-side WebSocket connection after the handshake, sans-IO (RFC
/// 6455 sections 5 to 7): the mirror of `WebSocketConnection`.
///
/// Every frame we send is masked with a fresh 32-bit key from
/// `maskingKey`, which the caller backs with a strong random source
/// (section 5.3: the key must be unpredictable, so a proxy cannot be fed
/// chosen bytes). Frames from the server must not be masked; one that is
/// fails the connection (section 5.1). Pings are answered at once, a close
/// from the server is echoed, and a protocol error queues a close with its
/// code, as on the server side.
public struct WebSocketClientConnection {
    public private(set) var state: WebSocketConnection.State = .open
    private var decoder: WebSocketFrameDecoder
    private var output: [UInt8] = []
    private let maskingKey: () -> UInt32

    public init(maxMessageBytes: Int = 1024 * 1024, maskingKey: @escaping () -> UInt32) {
        decoder = WebSocketFrameDecoder(maxMessageBytes: maxMessageBytes, decodingFramesFrom: .server)
        self.maskingKey = maskingKey
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
                queueClose(code: error.closeCode, reason: error.reason)
                state = .closed
                events.append(.closed(code: error.closeCode, reason: error.reason))
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
                if state == .open { queueClose(code: code, reason: "") }
                state = .closed
                events.append(.closed(code: code, reason: reason))
            }
        }
        return events
    }

    public mutating func send(text: String) {
        guard state == .open else { return }
        queue(.text, Array(text.utf8))
    }

    public mutating func send(binary: [UInt8]) {
        guard state == .open else { return }
        queue(.binary, binary)
    }

    /// Queues a ping; its payload is cut to the 125 bytes a control frame
    /// may carry.
    public mutating func sendPing(_ payload: [UInt8] = []) {
        guard state == .open else { return }
        queue(.ping, Array(payload.prefix(125)))
    }

    /// Starts the closing handshake; the server answers with its close
    /// and then closes the TCP connection (section 7.1.1).
    public mutating func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        guard state == .open else { return }
        queueClose(code: code, reason: reason)
        state = .closing
    }

    /// The bytes to write, in order; empties the queue.
    public mutating func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    private mutating func queue(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        output += WebSocketFrame(opcode: opcode, payload: payload).serialize(maskingKey: maskingKey())
    }

    private mutating func queueClose(code: WebSocketCloseCode?, reason: String) {
        // Reuse the server's payload rules (code, reason cut to 125 bytes),
        // then mask the frame as a client must.
        let unmasked = WebSocketConnection.closeFrame(code: code, reason: reason)
        let payload = Array(unmasked.dropFirst(2))
        queue(.close, payload)
    }
}
