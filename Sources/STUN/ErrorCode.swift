/// The ERROR-CODE attribute (RFC 8489 section 14.8): a code 300...699
/// carried as a class digit (3 bits) and a number 0...99, followed by a
/// UTF-8 reason phrase.
package struct STUNErrorCode: Hashable, Sendable, CustomStringConvertible {
    package let code: UInt16
    package var reason: String

    /// Fails for codes outside 300...699.
    package init?(code: UInt16, reason: String) {
        guard (300...699).contains(code) else { return nil }
        self.code = code
        self.reason = reason
    }

    init(uncheckedCode code: UInt16, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The hundreds digit (3...6).
    package var errorClass: UInt8 { UInt8(truncatingIfNeeded: code / 100) }
    /// The code modulo 100.
    package var number: UInt8 { UInt8(truncatingIfNeeded: code % 100) }

    package static let tryAlternate = STUNErrorCode(uncheckedCode: 300, reason: "Try Alternate")
    package static let badRequest = STUNErrorCode(uncheckedCode: 400, reason: "Bad Request")
    package static let unauthorized = STUNErrorCode(uncheckedCode: 401, reason: "Unauthorized")
    /// RFC 8656 section 19: TURN's codes.
    package static let forbidden = STUNErrorCode(uncheckedCode: 403, reason: "Forbidden")
    package static let allocationMismatch = STUNErrorCode(uncheckedCode: 437, reason: "Allocation Mismatch")
    package static let wrongCredentials = STUNErrorCode(uncheckedCode: 441, reason: "Wrong Credentials")
    package static let unsupportedTransportProtocol = STUNErrorCode(
        uncheckedCode: 442, reason: "Unsupported Transport Protocol")
    package static let peerAddressFamilyMismatch = STUNErrorCode(uncheckedCode: 443, reason: "Peer Address Family Mismatch")
    package static let allocationQuotaReached = STUNErrorCode(uncheckedCode: 486, reason: "Allocation Quota Reached")
    package static let insufficientCapacity = STUNErrorCode(uncheckedCode: 508, reason: "Insufficient Capacity")
    package static let unknownAttribute = STUNErrorCode(uncheckedCode: 420, reason: "Unknown Attribute")
    package static let staleNonce = STUNErrorCode(uncheckedCode: 438, reason: "Stale Nonce")
    /// RFC 8445 section 7.3.1.1: the tie-breaker decides which agent switches role.
    package static let roleConflict = STUNErrorCode(uncheckedCode: 487, reason: "Role Conflict")
    package static let serverError = STUNErrorCode(uncheckedCode: 500, reason: "Server Error")

    package var description: String { "\(code) \(reason)" }
}
