import Wire

/// A complete message or control frame from the peer.
package enum WebSocketMessage: Equatable, Sendable {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// `code` is nil when the close frame had no payload (1005 locally).
    case close(code: WebSocketCloseCode?, reason: String)
}

/// An incremental decoder of the frames a client sends (or, with
/// `init(maxMessageBytes:decodingFramesFrom: .server)`, a server sends), reassembling
/// fragmented messages (RFC 6455 sections 5 and 6.2).
///
/// Feed bytes in any chunks, then call `nextMessage()` until it returns
/// nil. Control frames may arrive between the fragments of a message and
/// come out at once (section 5.4). A message is refused with
/// `.messageTooBig` as soon as a frame header shows it would exceed
/// `maxMessageBytes`, before that frame's payload is buffered. Text is
/// validated as UTF-8 when the message completes.
///
/// After an error the decoder keeps throwing it: the connection must be
/// failed with the error's close code (section 7.1.7).
package struct WebSocketFrameDecoder: Sendable {
    package let maxMessageBytes: Int
    /// Whose frames this decoder reads: a server decodes the client's
    /// (masked), a client the server's (unmasked).
    package let sender: WebSocketRole
    private var buffer: [UInt8] = []
    private var start = 0
    /// The opcode and payload so far of a fragmented message.
    private var fragments: (opcode: WebSocketOpcode, payload: [UInt8])?
    private var failure: WebSocketProtocolError?
    package private(set) var consumedByteCount = 0

    package init(maxMessageBytes: Int = 1024 * 1024) {
        self.init(maxMessageBytes: maxMessageBytes, decodingFramesFrom: .client)
    }

    package init(maxMessageBytes: Int, decodingFramesFrom sender: WebSocketRole) {
        self.maxMessageBytes = max(maxMessageBytes, 125)
        self.sender = sender
    }

    package mutating func feed(_ bytes: RawSpan) {
        guard failure == nil else { return }
        buffer.reserveCapacity(buffer.count - start + bytes.byteCount)
        for i in 0..<bytes.byteCount { buffer.append(bytes.byte(at: i)) }
    }

    package mutating func feed(_ bytes: [UInt8]) { feed(bytes.span.bytes) }

    /// Bytes received and not yet decoded.
    package var bufferedByteCount: Int { buffer.count - start }

    /// Everything held for messages not yet complete: undecoded bytes and
    /// the payload of a fragmented message so far.
    package var heldByteCount: Int { bufferedByteCount + (fragments?.payload.count ?? 0) }

    package mutating func nextMessage() throws(WebSocketProtocolError) -> WebSocketMessage? {
        if let failure { throw failure }
        do throws(WebSocketProtocolError) {
            while let frame = try nextFrame() {
                if let message = try assemble(frame) { return message }
            }
            return nil
        } catch {
            failure = error
            buffer = []
            start = 0
            fragments = nil
            throw error
        }
    }

    /// The next whole frame, unmasked, with the size rules applied.
    mutating func nextFrame() throws(WebSocketProtocolError) -> WebSocketFrame? {
        guard let header = try WebSocketFrameHeader.parse(buffer.span.bytes.extracting(start..<buffer.count), from: sender) else {
            return nil
        }
        // Refuse an oversized message from its header, before buffering.
        if !header.opcode.isControl {
            let sofar = header.opcode == .continuation ? (fragments?.payload.count ?? 0) : 0
            guard header.payloadLength <= maxMessageBytes - sofar else { throw .messageTooBig }
        }
        let available = buffer.count - start - header.headerLength
        guard available >= header.payloadLength else { return nil }
        let payloadStart = start + header.headerLength
        var payload = Array(buffer[payloadStart..<payloadStart + header.payloadLength])
        if let key = header.maskingKey {
            let k = [UInt8(key >> 24), UInt8(key >> 16 & 0xFF), UInt8(key >> 8 & 0xFF), UInt8(key & 0xFF)]
            for i in payload.indices { payload[i] ^= k[i & 3] }
        }
        let frameLength = header.headerLength + header.payloadLength
        start += frameLength
        consumedByteCount += frameLength
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.count <= 64 * 1024)
            start = 0
        } else if start > 64 * 1024 {
            buffer.removeFirst(start)
            start = 0
        }
        return WebSocketFrame(fin: header.fin, opcode: header.opcode, payload: payload)
    }

    /// Fragmentation (section 5.4): a message is one data frame with FIN,
    /// or a data frame without FIN, continuations, and a last one with FIN.
    private mutating func assemble(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> WebSocketMessage? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.parseClose(frame.payload)
        case .text, .binary:
            guard fragments == nil else { throw .unexpectedFragment }
            if frame.fin { return try Self.message(frame.opcode, frame.payload) }
            fragments = (frame.opcode, frame.payload)
            return nil
        case .continuation:
            guard case (let opcode, var payload)? = fragments else { throw .unexpectedFragment }
            payload += frame.payload
            guard frame.fin else {
                fragments = (opcode, payload)
                return nil
            }
            fragments = nil
            return try Self.message(opcode, payload)
        }
    }

    private static func message(
        _ opcode: WebSocketOpcode, _ payload: [UInt8]
    ) throws(WebSocketProtocolError)
        -> WebSocketMessage
    {
        guard opcode == .text else { return .binary(payload) }
        guard let text = String(validating: payload, as: UTF8.self) else { throw .invalidUTF8 }
        return .text(text)
    }

    /// Close payload (section 5.5.1): empty, or a 2-byte code that may be
    /// sent on the wire followed by a UTF-8 reason.
    static func parseClose(_ payload: [UInt8]) throws(WebSocketProtocolError) -> WebSocketMessage {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw .invalidClosePayload }
        let code = WebSocketCloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isValidOnTheWire else { throw .invalidClosePayload }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else { throw .invalidUTF8 }
        return .close(code: code, reason: reason)
    }
}
