import FoundationEssentials

/// The bounds every room protocol message is decoded under, by the server
/// (`ClientMessage`) and by roombot (`ServerMessage`): checked on the text
/// before the JSON decoder builds anything, so a message over them costs
/// one scan of its bytes and is refused with a `RoomProtocolError`.
package struct RoomProtocolLimits: Equatable, Sendable {
    /// Bytes of one message: the WebSocket message limit
    /// (1 MiB, `WebSocketConnection`'s default; docs/SECURITY.md).
    package var messageBytes = 1024 * 1024
    /// Arrays and objects nested in one another. The deepest message the
    /// server writes is `joined` (message, participants, participant,
    /// tracks, track, layers: 6); mesh payloads (an SDP or a candidate
    /// object) add 2 or 3 under their envelope.
    package var depth = 32
    /// Elements of one array or members of one object. The longest list
    /// is `joined`'s participants, at most `participantsPerRoom` (whose
    /// largest setting is 100,000).
    package var entries = 100_000

    package init(messageBytes: Int = 1024 * 1024, depth: Int = 32, entries: Int = 100_000) {
        self.messageBytes = messageBytes
        self.depth = depth
        self.entries = entries
    }

    package static let standard = RoomProtocolLimits()
}

/// Why a text is not a room protocol message, or a message cannot be
/// written. The server sends `description` back in `bad_request`.
package enum RoomProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// More bytes than `RoomProtocolLimits.messageBytes`.
    case tooLarge(limit: Int)
    /// Arrays and objects nested deeper than `RoomProtocolLimits.depth`.
    case tooDeep(limit: Int)
    /// An array or object with more than `RoomProtocolLimits.entries`.
    case tooManyEntries(limit: Int)
    /// A `type` this protocol does not have (a newer peer's message).
    case unknownType(String)
    /// A member the message's type needs is absent.
    case missingKey(String)
    /// A member of the wrong JSON type, at this path.
    case wrongType(path: String)
    /// A member that is null where a value is needed, at this path.
    case missingValue(path: String)
    /// Not JSON, or a value outside its set (an unknown mode or code).
    case invalid(String)
    /// A value JSON cannot carry (a number that is not finite).
    case unencodable(String)

    package var description: String {
        switch self {
        case .tooLarge(let limit): "larger than \(limit) bytes"
        case .tooDeep(let limit): "nested deeper than \(limit) arrays or objects"
        case .tooManyEntries(let limit): "more than \(limit) entries in one array or object"
        case .unknownType(let type): "unknown message type '\(type)'"
        case .missingKey(let key): "missing '\(key)'"
        case .wrongType(let path): "wrong type at \(path)"
        case .missingValue(let path): "missing value at \(path)"
        case .invalid(let reason): reason
        case .unencodable(let reason): "cannot encode: \(reason)"
        }
    }

    init(_ error: DecodingError) {
        func path(_ c: DecodingError.Context) -> String { c.codingPath.map(\.stringValue).joined(separator: ".") }
        switch error {
        case .dataCorrupted(let c): self = .invalid(c.debugDescription)
        case .keyNotFound(let key, _): self = .missingKey(key.stringValue)
        case .typeMismatch(_, let c): self = .wrongType(path: path(c))
        case .valueNotFound(_, let c): self = .missingValue(path: path(c))
        @unknown default: self = .invalid("malformed JSON")
        }
    }
}

extension ClientMessage {
    /// A client's message from its text (the server's side).
    package init(json text: String, limits: RoomProtocolLimits = .standard) throws(RoomProtocolError) {
        self = try RoomProtocolJSON.decode(text, limits: limits)
    }

    /// The message as a client sends it (roombot's side).
    package func json() throws(RoomProtocolError) -> String {
        String(decoding: try RoomProtocolJSON.encode(self), as: UTF8.self)
    }
}

extension ServerMessage {
    /// A server's message from its text (roombot's side). Members this
    /// enum does not carry are ignored (`joined`'s `iceServers`).
    package init(json text: String, limits: RoomProtocolLimits = .standard) throws(RoomProtocolError) {
        self = try RoomProtocolJSON.decode(text, limits: limits)
    }

    /// The message as the server sends it; `iceServers`, on `joined` only,
    /// adds that member (docs/PROTOCOL.md): the credentials are made for
    /// the connection when it is sent, so they are not part of the message.
    package func jsonBytes(iceServers: [ICEServer]? = nil) throws(RoomProtocolError) -> [UInt8] {
        guard case .joined = self, let iceServers else { return try RoomProtocolJSON.encode(self) }
        return try RoomProtocolJSON.encode(JoinedWithICEServers(message: self, iceServers: iceServers))
    }

    package func json() throws(RoomProtocolError) -> String {
        String(decoding: try jsonBytes(), as: UTF8.self)
    }

    package func json(iceServers: [ICEServer]) throws(RoomProtocolError) -> String {
        String(decoding: try jsonBytes(iceServers: iceServers), as: UTF8.self)
    }

    private struct JoinedWithICEServers: Encodable {
        let message: ServerMessage
        let iceServers: [ICEServer]
        enum Keys: String, CodingKey { case iceServers }
        func encode(to encoder: any Encoder) throws {
            try message.encode(to: encoder)
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(iceServers, forKey: .iceServers)
        }
    }
}

/// The one JSON codec of the room protocol.
enum RoomProtocolJSON {
    static func decode<Message: Decodable>(_ text: String, limits: RoomProtocolLimits) throws(RoomProtocolError) -> Message {
        let bytes = text.utf8
        guard bytes.count <= limits.messageBytes else { throw .tooLarge(limit: limits.messageBytes) }
        try checkShape(bytes, limits: limits)
        do {
            return try JSONDecoder().decode(Message.self, from: Data(bytes))
        } catch let error as RoomProtocolError {
            throw error
        } catch let error as DecodingError {
            throw RoomProtocolError(error)
        } catch {
            throw .invalid("malformed JSON")
        }
    }

    static func encode(_ value: some Encodable) throws(RoomProtocolError) -> [UInt8] {
        do {
            return Array(try encoder.encode(value))
        } catch let EncodingError.invalidValue(_, c) {
            throw .unencodable(c.debugDescription)
        } catch {
            throw .unencodable("\(error)")
        }
    }

    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes]
        return e
    }()

    /// Depth and entry counts, outside strings (RFC 8259 section 7: a
    /// quote inside a string is escaped, so an unescaped one ends it).
    /// Malformed JSON passes here and is the decoder's to refuse; the scan
    /// only bounds what the decoder will build.
    static func checkShape(_ bytes: String.UTF8View, limits: RoomProtocolLimits) throws(RoomProtocolError) {
        // Separators seen + 1 in each open container: its entries when it
        // has any.
        var open: [Int] = []
        open.reserveCapacity(min(limits.depth, 64))
        var inString = false
        var escaped = false
        for b in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if b == UInt8(ascii: "\\") {
                    escaped = true
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                guard open.count < limits.depth else { throw .tooDeep(limit: limits.depth) }
                open.append(1)
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if !open.isEmpty { open.removeLast() }
            case UInt8(ascii: ","):
                guard let last = open.indices.last else { break }
                open[last] += 1
                guard open[last] <= limits.entries else { throw .tooManyEntries(limit: limits.entries) }
            default: break
            }
        }
    }
}
