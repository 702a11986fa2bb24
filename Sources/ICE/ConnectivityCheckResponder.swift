import STUN
import Wire

/// Counts of what an agent did with the datagrams it was handed; bad input
/// is counted and dropped, never thrown at the caller.
package struct ICECounters: Hashable, Sendable {
    /// Not a STUN message, or a malformed one (`STUNMessage.parse` or
    /// `STUNMessageView` failed).
    package var malformed = 0
    /// Dropped without an answer: FINGERPRINT missing or wrong, a method
    /// other than Binding, a response no transaction expects, a response
    /// that fails authentication, input after failure.
    package var discarded = 0
    /// Requests answered with an error response (400, 401, 420, 487).
    package var rejected = 0
    /// Requests that passed every check and got a success response.
    package var validChecks = 0
    /// Binding indications (keepalives), accepted silently.
    package var indications = 0
    package init() {}
}

/// A Binding request that passed the checks of RFC 8445 section 7.3 and
/// RFC 8489 section 6.3: FINGERPRINT, USERNAME, MESSAGE-INTEGRITY under the
/// local password, no unknown comprehension-required attribute.
struct AuthenticatedCheck: Hashable, Sendable {
    var transactionID: TransactionID
    var priority: UInt32?
    var useCandidate: Bool
    var control: ICEControlAttribute?
}

/// What to do with an incoming Binding request, before any role logic.
enum CheckRequestVerdict: Hashable, Sendable {
    /// Drop silently (RFC 8489 section 7.3: a FINGERPRINT that is missing,
    /// which ICE requires, RFC 8445 section 7.3, or wrong).
    case discard
    /// Answer with this error. `authenticated` is false when the request's
    /// own authentication failed: the answer then carries no
    /// MESSAGE-INTEGRITY (RFC 8489 section 9.1.3), so nobody learns a MAC
    /// under our key for a message an attacker chose.
    case reject(STUNErrorCode, unknownAttributes: [STUNAttributeType], authenticated: Bool)
    case valid(AuthenticatedCheck)
}

/// The server side of a connectivity check, shared by the lite and the full
/// agent: validation of a Binding request and the responses to it.
enum ConnectivityCheckResponder {
    /// Applies, in order: FINGERPRINT (discard), USERNAME and
    /// MESSAGE-INTEGRITY present (else 400), USERNAME is
    /// `localUfrag:remoteUfrag` (else 401; any non-empty remote part is
    /// accepted while `remoteUfrag` is nil), MESSAGE-INTEGRITY (and
    /// MESSAGE-INTEGRITY-SHA256 if present) verifies under the local
    /// password (else 401), no unknown comprehension-required attributes
    /// (else 420, authenticated). RFC 8489 sections 6.3, 9.1.3 and 6.3.1.1;
    /// RFC 8445 section 7.3.
    ///
    /// Reads the request in place (`STUNMessageView`): the consent check
    /// (RFC 7675) that passes allocates nothing here; only the 420 path
    /// lists the unknown attributes.
    static func examine(
        _ message: STUNMessageView, in bytes: RawSpan, local: ICECredentials, remoteUfrag: String?
    ) -> CheckRequestVerdict {
        guard message.verifyFingerprint(in: bytes) else { return .discard }
        guard message.username != nil, message.messageIntegrity != nil else {
            return .reject(.badRequest, unknownAttributes: [], authenticated: false)
        }
        let matches = message.withUsername(in: bytes) { username in
            usernameMatches(username, localUfrag: local.ufrag, remoteUfrag: remoteUfrag)
        }
        guard matches == true, message.verifyIntegrity(key: local.key, in: bytes)
        else { return .reject(.unauthorized, unknownAttributes: [], authenticated: false) }
        guard message.unknownComprehensionRequiredCount == 0 else {
            return .reject(
                .unknownAttribute, unknownAttributes: message.unknownComprehensionRequired(in: bytes), authenticated: true)
        }
        let control: ICEControlAttribute? =
            if let t = message.iceControlling { .controlling(tieBreaker: t) } else if let t = message.iceControlled {
                .controlled(tieBreaker: t)
            } else { nil }
        return .valid(
            AuthenticatedCheck(
                transactionID: message.transactionID, priority: message.priority,
                useCandidate: message.useCandidate, control: control))
    }

    /// RFC 8445 section 7.3: the USERNAME of a check we receive is
    /// `ourUfrag:theirUfrag`; compared byte for byte, in place.
    static func usernameMatches(_ username: UnsafeRawBufferPointer, localUfrag: String, remoteUfrag: String?) -> Bool {
        guard let colon = username.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let localPart = username[..<colon]
        let remotePart = username[(colon + 1)...]
        guard localPart.elementsEqual(localUfrag.utf8), !remotePart.isEmpty else { return false }
        if let remoteUfrag { return remotePart.elementsEqual(remoteUfrag.utf8) }
        return true
    }

    /// RFC 8445 section 7.3.1.3: XOR-MAPPED-ADDRESS of the request's
    /// source, MESSAGE-INTEGRITY under the local password, FINGERPRINT.
    /// Nil only if the MAC cannot be computed: nothing goes out unprotected.
    static func success(
        transactionID: TransactionID, source: TransportAddress, local: ICECredentials, software: String?
    ) -> [UInt8]? {
        try? STUNMessageBuilder.bindingSuccessResponse(
            transactionID: transactionID, xorMappedAddress: source, key: local.key, software: software)
    }

    static func error(
        _ code: STUNErrorCode, unknownAttributes: [STUNAttributeType], authenticated: Bool,
        transactionID: TransactionID, local: ICECredentials, software: String?
    ) -> [UInt8]? {
        try? STUNMessageBuilder.bindingErrorResponse(
            transactionID: transactionID, error: code, unknownAttributes: unknownAttributes,
            key: authenticated ? local.key : nil, software: software)
    }
}
