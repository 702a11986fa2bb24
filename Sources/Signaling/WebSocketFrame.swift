import Wire

/// The opcode of a WebSocket frame (RFC 6455 section 5.2). Values 3 to 7
/// and 11 to 15 are reserved and refused.
package enum WebSocketOpcode: UInt8, Equatable, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Control frames (opcodes with the high bit set, section 5.5) may not
    /// be fragmented and carry at most 125 bytes.
    package var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Why a peer's frames were refused; each maps to the close code we send
/// before closing (RFC 6455 section 7.4.1).
package enum WebSocketProtocolError: Error, Equatable, Sendable {
    /// RSV1-3 set without a negotiated extension (section 5.2).
    case reservedBitsSet
    case reservedOpcode(UInt8)
    /// A client frame without a mask (section 5.1).
    case unmaskedFrame
    /// A server frame with a mask (section 5.1): a client must close the
    /// connection when it sees one.
    case maskedFrame
    /// A 64-bit length with its most significant bit set (section 5.2).
    case invalidPayloadLength
    /// A control frame over 125 bytes or without FIN (section 5.5).
    case invalidControlFrame
    /// Continuation without a message in progress, or a new data frame
    /// while one is (section 5.4).
    case unexpectedFragment
    /// A text message or close reason that is not UTF-8 (section 8.1).
    case invalidUTF8
    /// A message longer than the configured limit, refused from the frame
    /// header before its payload is buffered.
    case messageTooBig
    /// A close payload of one byte, or a code not allowed on the wire
    /// (section 7.4).
    case invalidClosePayload

    package var closeCode: WebSocketCloseCode {
        switch self {
        case .invalidUTF8: return .invalidFramePayloadData
        case .messageTooBig: return .messageTooBig
        default: return .protocolError
        }
    }

    package var reason: String {
        switch self {
        case .reservedBitsSet: return "reserved bits set"
        case .reservedOpcode(let op): return "reserved opcode \(op)"
        case .unmaskedFrame: return "client frames must be masked"
        case .maskedFrame: return "server frames must not be masked"
        case .invalidPayloadLength: return "invalid payload length"
        case .invalidControlFrame: return "control frames must be short and unfragmented"
        case .unexpectedFragment: return "unexpected fragment"
        case .invalidUTF8: return "invalid UTF-8"
        case .messageTooBig: return "message too big"
        case .invalidClosePayload: return "invalid close frame"
        }
    }
}

/// Which end of a WebSocket connection sent (or will send) a frame.
package enum WebSocketRole: Equatable, Sendable {
    case client, server
}

/// One WebSocket frame with its payload unmasked (RFC 6455 section 5.2).
package struct WebSocketFrame: Equatable, Sendable {
    package var fin: Bool
    package var opcode: WebSocketOpcode
    package var payload: [UInt8]

    package init(fin: Bool = true, opcode: WebSocketOpcode, payload: [UInt8]) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// The frame on the wire. Servers send unmasked frames (section 5.1);
    /// a masking key is for building client frames in tests. Lengths use
    /// the shortest of the 7, 16 and 64-bit forms.
    package func serialize(maskingKey: UInt32? = nil) -> [UInt8] {
        var w = ByteWriter(capacity: payload.count + 14)
        w.uint8((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        if payload.count <= 125 {
            w.uint8(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            w.uint8(maskBit | 126)
            w.uint16(UInt16(payload.count))
        } else {
            w.uint8(maskBit | 127)
            w.uint64(UInt64(payload.count))
        }
        guard let key = maskingKey else {
            w.append(payload)
            return w.bytes
        }
        w.uint32(key)
        let k = [UInt8(key >> 24), UInt8(key >> 16 & 0xFF), UInt8(key >> 8 & 0xFF), UInt8(key & 0xFF)]
        var masked = payload
        for i in masked.indices { masked[i] ^= k[i & 3] }
        w.append(masked)
        return w.bytes
    }
}

/// The fixed part of a frame, parsed in place (RFC 6455 section 5.2).
package struct WebSocketFrameHeader: Equatable, Sendable {
    package var fin: Bool
    package var opcode: WebSocketOpcode
    package var maskingKey: UInt32?
    package var payloadLength: Int
    /// Bytes from the frame start to the payload: 2 to 14.
    package var headerLength: Int

    /// The header at the start of `bytes`, nil when more bytes are needed
    /// to see all of it. Checks everything the header alone decides for a
    /// frame a client sent: reserved bits and opcodes, the mask, the length
    /// encoding, and the control-frame rules.
    package static func parse(_ bytes: RawSpan) throws(WebSocketProtocolError) -> WebSocketFrameHeader? {
        try parse(bytes, from: .client)
    }

    /// The header of a frame sent by `sender`: a client's frames must be
    /// masked, a server's must not be (RFC 6455 section 5.1); the other
    /// checks are the same for both.
    package static func parse(
        _ bytes: RawSpan, from sender: WebSocketRole
    ) throws(WebSocketProtocolError) -> WebSocketFrameHeader? {
        var r = ByteReader(bytes)
        guard let b0 = r.peekUInt8(at: 0), let b1 = r.peekUInt8(at: 1) else { return nil }
        guard b0 & 0x70 == 0 else { throw .reservedBitsSet }
        guard let opcode = WebSocketOpcode(rawValue: b0 & 0x0F) else { throw .reservedOpcode(b0 & 0x0F) }
        let masked = b1 & 0x80 != 0
        switch sender {
        case .client: guard masked else { throw .unmaskedFrame }
        case .server: guard !masked else { throw .maskedFrame }
        }
        let fin = b0 & 0x80 != 0
        let length7 = b1 & 0x7F
        let extended = length7 == 126 ? 2 : length7 == 127 ? 8 : 0
        let headerLength = 2 + extended + (masked ? 4 : 0)
        if opcode.isControl {
            guard fin, length7 <= 125 else { throw .invalidControlFrame }
        }
        guard r.canRead(headerLength) else { return nil }
        try r.skip(2, or: WebSocketProtocolError.invalidPayloadLength)
        let length: UInt64
        switch length7 {
        case 126: length = UInt64(try r.uint16(or: WebSocketProtocolError.invalidPayloadLength))
        case 127: length = try r.uint64(or: WebSocketProtocolError.invalidPayloadLength)
        default: length = UInt64(length7)
        }
        guard length >> 63 == 0, let payloadLength = Int(exactly: length) else { throw .invalidPayloadLength }
        let key = masked ? try r.uint32(or: WebSocketProtocolError.invalidPayloadLength) : nil
        return WebSocketFrameHeader(
            fin: fin, opcode: opcode, maskingKey: key, payloadLength: payloadLength, headerLength: headerLength)
    }
}
