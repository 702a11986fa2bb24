/// The status code of a WebSocket Close frame (RFC 6455 section 7.4).
package struct WebSocketCloseCode: RawRepresentable, Equatable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt16
    package init(rawValue: UInt16) { self.rawValue = rawValue }
    package init(_ rawValue: UInt16) { self.rawValue = rawValue }

    package static let normalClosure = WebSocketCloseCode(1000)
    package static let goingAway = WebSocketCloseCode(1001)
    package static let protocolError = WebSocketCloseCode(1002)
    package static let unsupportedData = WebSocketCloseCode(1003)
    /// Never on the wire: "the close frame had no status code".
    package static let noStatusReceived = WebSocketCloseCode(1005)
    /// Never on the wire: "the connection ended without a close frame".
    package static let abnormalClosure = WebSocketCloseCode(1006)
    package static let invalidFramePayloadData = WebSocketCloseCode(1007)
    package static let policyViolation = WebSocketCloseCode(1008)
    package static let messageTooBig = WebSocketCloseCode(1009)
    package static let internalError = WebSocketCloseCode(1011)
    /// IANA-registered (RFC 6455 section 11.7): "service restart", the
    /// client should reconnect (a proxied session lost its node).
    package static let serviceRestart = WebSocketCloseCode(1012)
    /// IANA-registered (RFC 6455 section 11.7): "try again later", the
    /// server is overloaded.
    package static let tryAgainLater = WebSocketCloseCode(1013)

    /// Whether a peer may send this code in a Close frame: the codes of
    /// section 7.4.1 that are not reserved for local use (1005, 1006, 1015)
    /// the IANA
    /// registered 1012 to 1014, and the application ranges 3000 to 4999.
    package var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    package var description: String { String(rawValue) }
}
