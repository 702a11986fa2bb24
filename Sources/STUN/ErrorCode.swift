/// The ERROR-CODE attribute (RFC 8489 section 14.8): a code 300...699
/// carried as a class digit (3 bits) and a number 0...99, followed by a
/// UTF-8 reason phrase.
public struct STUNErrorCode: Hashable, Sendable, CustomStringConvertible {
    public let code: UInt16
    public var reason: String

    /// Fails for codes outside 300...699.
    public init?(code: UInt16, reason: String) {
        guard (300...699).contains(code) else { return nil }
        self.code = code
        self.reason = reason
    }

    init(uncheckedCode code: UInt16, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The hundreds digit (3...6).
    public var errorClass: UInt8 { UInt8(truncatingIfNeeded: code / 100) }
    /// The code modulo 100.
    public var number: UInt8 { UInt8(truncatingIfNeeded: code % 100) }

    public static let tryAlternate = STUNErrorCode(uncheckedCode: 300, reason: "Try Alternate")
    public static let badRequest = STUNErrorCode(uncheckedCode: 400, reason: "Bad Request")
    public static let unauthorized = STUNErrorCode(uncheckedCode: 401, reason: "Unauthorized")
    /// RFC 8656 section 19: TURN's codes.
    public static let forbidden = STUNErrorCode(uncheckedCode: 403, reason: "Forbidden")
    public static let allocationMismatch = STUNErrorCode(uncheckedCode: 437, reason: "Allocation Mismatch")
    public static let wrongCredentials = STUNErrorCode(uncheckedCode: 441, reason: "Wrong Credentials")
    public static let unsupportedTransportProtocol = STUNErrorCode(
        uncheckedCode: 442, reason: "Unsupported Transport Protocol")
    public static let peerAddressFamilyMismatch = STUNErrorCode(uncheckedCode: 443, reason: "Peer Address Family Mismatch")
    public static let allocationQuotaReached = STUNErrorCode(uncheckedCode: 486, reason: "Allocation Quota Reached")
    public static let insufficientCapacity = STUNErrorCode(uncheckedCode: 508, reason: "Insufficient Capacity")
    public static let unknownAttribute = STUNErrorCode(uncheckedCode: 420, reason: "Unknown Attribute")
    public static let staleNonce = STUNErrorCode(uncheckedCode: 438, reason: "Stale Nonce")
    /// RFC 8445 section 7.3.1.1: the tie-breaker decides which agent switches role.
    public static let roleConflict = STUNErrorCode(uncheckedCode: 487, reason: "Role Conflict")
    public static let serverError = STUNErrorCode(uncheckedCode: 500, reason: "Server Error")

    public var description: String { "\(code) \(reason)" }
}
