import Wire

/// The role attribute of an ICE connectivity check (RFC 8445 section 7.1.3),
/// with the agent's 64-bit tie-breaker.
package enum ICEControlAttribute: Hashable, Sendable {
    case controlling(tieBreaker: UInt64)
    case controlled(tieBreaker: UInt64)
}

/// Ready-made Binding messages for ICE connectivity checks (RFC 8445
/// sections 7.1 and 7.3). All are protected with MESSAGE-INTEGRITY under the
/// short-term key when one is given, and end with FINGERPRINT, which ICE
/// requires (RFC 8445 section 7.1 and 7.3: FINGERPRINT on every check and
/// response).
extension STUNMessageBuilder {
    /// A connectivity check: Binding request with SOFTWARE (when given),
    /// PRIORITY, ICE-CONTROLLING or ICE-CONTROLLED, USE-CANDIDATE (when
    /// nominating), USERNAME (`remoteUfrag:localUfrag`, RFC 8445 section
    /// 7.2.2), MESSAGE-INTEGRITY under the remote password, FINGERPRINT.
    /// This is the attribute order of the RFC 5769 sample request.
    package static func bindingRequest(
        transactionID: TransactionID, username: String, priority: UInt32, control: ICEControlAttribute,
        useCandidate: Bool = false, key: [UInt8], software: String? = nil
    ) throws(STUNBuildError) -> [UInt8] {
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: transactionID)
        if let software { try b.appendSoftware(software) }
        try b.appendPriority(priority)
        switch control {
        case .controlling(let tieBreaker): try b.appendICEControlling(tieBreaker: tieBreaker)
        case .controlled(let tieBreaker): try b.appendICEControlled(tieBreaker: tieBreaker)
        }
        if useCandidate { try b.appendUseCandidate() }
        try b.appendUsername(username)
        try b.appendMessageIntegrity(key: key)
        try b.appendFingerprint()
        return b.bytes
    }

    /// A Binding success response carrying the request's source address in
    /// XOR-MAPPED-ADDRESS (RFC 8445 section 7.3.1.3), protected under the
    /// local password (the key the request was verified with).
    package static func bindingSuccessResponse(
        transactionID: TransactionID, xorMappedAddress: TransportAddress, key: [UInt8]?, software: String? = nil
    ) throws(STUNBuildError) -> [UInt8] {
        var b = STUNMessageBuilder(type: .bindingSuccessResponse, transactionID: transactionID)
        if let software { try b.appendSoftware(software) }
        try b.appendXORMappedAddress(xorMappedAddress)
        if let key { try b.appendMessageIntegrity(key: key) }
        try b.appendFingerprint()
        return b.bytes
    }

    /// A Binding error response with ERROR-CODE and, for 420, the
    /// UNKNOWN-ATTRIBUTES list (RFC 8489 section 6.3.1.1). Responses to
    /// requests that failed authentication (400, 401) carry no
    /// MESSAGE-INTEGRITY: pass `key: nil` (RFC 8489 section 9.1.3).
    package static func bindingErrorResponse(
        transactionID: TransactionID, error: STUNErrorCode, unknownAttributes: [STUNAttributeType] = [],
        key: [UInt8]?, software: String? = nil
    ) throws(STUNBuildError) -> [UInt8] {
        var b = STUNMessageBuilder(type: .bindingErrorResponse, transactionID: transactionID)
        if let software { try b.appendSoftware(software) }
        try b.appendErrorCode(error)
        if !unknownAttributes.isEmpty { try b.appendUnknownAttributes(unknownAttributes) }
        if let key { try b.appendMessageIntegrity(key: key) }
        try b.appendFingerprint()
        return b.bytes
    }
}
