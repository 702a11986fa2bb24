/// The status code of a WebSocket Close frame (RFC 6455 section 7.4).
public struct WebSocketCloseCode: RawRepresentable, Equatable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let normalClosure = WebSocketCloseCode(1000)
    public static let goingAway = WebSocketCloseCode(1001)
    public static let protocolError = WebSocketCloseCode(1002)
    public static let unsupportedData = WebSocketCloseCode(1003)
    /// Never on the wire: "the close frame had no status code".
    public static let noStatusReceived = WebSocketCloseCode(1005)
    /// Never on the wire: "the connection ended without a close frame".
    public static let abnormalClosure = WebSocketCloseCode(1006)
    public static let invalidFramePayloadData = WebSocketCloseCode(1007)
    public static let policyViolation = WebSocketCloseCode(1008)
    public static let messageTooBig = WebSocketCloseCode(1009)
    public static let internalError = WebSocketCloseCode(1011)
    /// IANA-registered (RFC 6455 section 11.7): "try again later", the
    /// server is overloaded.
    public static let tryAgainLater = WebSocketCloseCode(1013)

    /// Whether a peer may send this code in a Close frame: the codes of
    /// section 7.4.1 that are not reserved for local use (1005, 1006, 1015)
    /// the IANA
    /// registered 1012 to 1014, and the application ranges 3000 to 4999.
    public var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    public var description: String { String(rawValue) }
}
