import Wire

/// A STUN message read in place, for the consent check on the media path
/// (RFC 7675: every peer sends a Binding request every few seconds): what
/// an ICE connectivity check needs (RFC 8445 section 7.3), as values and
/// offsets into the bytes, with no allocation.
///
/// It accepts and rejects exactly what `STUNMessage.parse` does, with the
/// same typed errors: the same walk (`STUNAttributeWalk`: header, bounds,
/// attribute count, FINGERPRINT last, nothing after an integrity attribute
/// processed; RFC 8489 sections 5 and 14) and the same checks of each value
/// (`STUNMessage.checkLength`, `transportAddress`, `validateText`,
/// `errorCode`, `TURNAttributes.process`), which it applies without
/// keeping what they decode. Tests and the STUN fuzz entry point hold the
/// two to the same verdict on every input.
///
/// Like `STUNMessage` it holds no bytes: pass the same bytes again to
/// `username(in:)`, `verifyFingerprint(in:)` and `verifyIntegrity(key:in:)`.
package struct STUNMessageView: Hashable, Sendable {
    package let type: STUNMessageType
    package let transactionID: TransactionID
    /// Bytes of the whole message, header included.
    package let byteCount: Int
    /// Every attribute counted, including skipped ones.
    package private(set) var attributeCount = 0

    /// Where the first USERNAME's value lies in the message (RFC 8489
    /// section 14.3), already checked to be UTF-8 of at most
    /// `STUNMessage.maxTextLength` bytes.
    package private(set) var username: Range<Int>?
    package private(set) var priority: UInt32?
    package private(set) var useCandidate = false
    package private(set) var iceControlling: UInt64?
    package private(set) var iceControlled: UInt64?
    package private(set) var messageIntegrity: STUNMessage.AttributeLocation?
    package private(set) var messageIntegritySHA256: STUNMessage.AttributeLocation?
    package private(set) var fingerprint: STUNMessage.AttributeLocation?
    /// Comprehension-required attributes this parser does not know,
    /// counted with repeats; `STUNMessage.parse` lists them (without
    /// repeats) for the rare 420 answer (RFC 8489 section 6.3.1.1).
    package private(set) var unknownComprehensionRequiredCount = 0

    /// Reads one whole STUN message.
    package init(_ bytes: RawSpan) throws(STUNParseError) {
        var walk = try STUNAttributeWalk(bytes)
        type = walk.type
        transactionID = walk.transactionID
        byteCount = walk.byteCount
        // Only TURN messages fill it, and a Binding request has no TURN
        // attribute: it stays empty and allocates nothing on the consent
        // path, yet TURN values are checked by the one implementation.
        var turn = TURNAttributes()
        var seen = Seen()
        while let (type, location) = try walk.next(in: bytes) {
            var value = STUNAttributeWalk.value(bytes, at: location)
            try process(type, &value, at: location, seen: &seen, turn: &turn)
        }
        attributeCount = walk.attributeCount
    }

    package init(_ bytes: [UInt8]) throws(STUNParseError) { try self.init(bytes.span.bytes) }

    /// First occurrences of the attributes whose value is checked but not
    /// kept: only the first of a repeated attribute is processed (RFC 8489
    /// section 14), so a later bad one is ignored as the parser ignores it.
    private struct Seen {
        var mappedAddress = false, xorMappedAddress = false
        var software = false, realm = false, nonce = false
        var errorCode = false, unknownAttributes = false
    }

    /// The checks of `STUNMessage.process`, in the same order, keeping only
    /// what a connectivity check reads.
    private mutating func process(
        _ type: STUNAttributeType, _ value: inout ByteReader, at location: STUNMessage.AttributeLocation,
        seen: inout Seen, turn: inout TURNAttributes
    ) throws(STUNParseError) {
        let length = location.valueLength
        func first(_ flag: inout Bool) -> Bool {
            defer { flag = true }
            return !flag
        }
        switch type {
        case .fingerprint:
            try STUNMessage.checkLength(type, length)
            fingerprint = location
        case .messageIntegrity:
            try STUNMessage.checkLength(type, length)
            messageIntegrity = location
        case .messageIntegritySHA256:
            try STUNMessage.checkLength(type, length)
            messageIntegritySHA256 = location
        case .mappedAddress:
            guard first(&seen.mappedAddress) else { return }
            _ = try STUNMessage.transportAddress(&value, type: type)
        case .xorMappedAddress:
            guard first(&seen.xorMappedAddress) else { return }
            _ = try STUNMessage.transportAddress(&value, type: type)
        case .username:
            guard username == nil else { return }
            try STUNMessage.validateText(value, type: type)
            username = location.valueRange
        case .software:
            guard first(&seen.software) else { return }
            try STUNMessage.validateText(value, type: type)
        case .realm:
            guard first(&seen.realm) else { return }
            try STUNMessage.validateText(value, type: type)
        case .nonce:
            guard first(&seen.nonce) else { return }
            try STUNMessage.validateText(value, type: type)
        case .errorCode:
            guard first(&seen.errorCode) else { return }
            _ = try STUNMessage.errorCode(&value)
            try STUNMessage.validateText(value, type: .errorCode)
        case .unknownAttributes:
            guard first(&seen.unknownAttributes) else { return }
            try STUNMessage.checkLength(type, length)
        case .priority:
            guard priority == nil else { return }
            try STUNMessage.checkLength(type, length)
            priority = try value.uint32(or: STUNParseError.malformedAttribute(type))
        case .useCandidate:
            try STUNMessage.checkLength(type, length)
            useCandidate = true
        case .iceControlling:
            guard iceControlling == nil else { return }
            try STUNMessage.checkLength(type, length)
            iceControlling = try value.uint64(or: STUNParseError.malformedAttribute(type))
        case .iceControlled:
            guard iceControlled == nil else { return }
            try STUNMessage.checkLength(type, length)
            iceControlled = try value.uint64(or: STUNParseError.malformedAttribute(type))
        default:
            if try turn.process(type, &value, location: location, transactionID: transactionID) { return }
            if type.isComprehensionRequired { unknownComprehensionRequiredCount += 1 }
        }
    }

    // MARK: Reading the bytes again

    /// Calls `body` with USERNAME's bytes in `bytes` (the message this view
    /// was read from); nil without USERNAME or for other bytes.
    package func withUsername<R>(in bytes: RawSpan, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard let range = username, bytes.byteCount == byteCount else { return nil }
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// True when FINGERPRINT is present and matches `bytes` (RFC 8489
    /// section 14.7).
    package func verifyFingerprint(in bytes: RawSpan) -> Bool {
        STUNIntegrity.verifyFingerprint(fingerprint, messageLength: byteCount, in: bytes)
    }

    /// True when at least one integrity attribute is present and every one
    /// present verifies under `key` (RFC 8489 sections 14.5 and 14.6), as
    /// `STUNMessage.verifyIntegrity`.
    package func verifyIntegrity(key: [UInt8], in bytes: RawSpan) -> Bool {
        STUNIntegrity.verifyAll(
            key: key, messageIntegrity, messageIntegritySHA256, messageLength: byteCount, in: bytes)
    }

    /// The unknown comprehension-required attributes, without repeats, in
    /// order of appearance, for a 420 answer: parses `bytes` in full, so
    /// it allocates (an error path, never the consent check).
    package func unknownComprehensionRequired(in bytes: RawSpan) -> [STUNAttributeType] {
        guard unknownComprehensionRequiredCount > 0 else { return [] }
        return (try? STUNMessage.parse(bytes))?.unknownComprehensionRequired ?? []
    }

    package func withUsername<R>(in bytes: [UInt8], _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        withUsername(in: bytes.span.bytes, body)
    }
    package func verifyFingerprint(in bytes: [UInt8]) -> Bool { verifyFingerprint(in: bytes.span.bytes) }
    package func verifyIntegrity(key: [UInt8], in bytes: [UInt8]) -> Bool { verifyIntegrity(key: key, in: bytes.span.bytes) }
    package func unknownComprehensionRequired(in bytes: [UInt8]) -> [STUNAttributeType] {
        unknownComprehensionRequired(in: bytes.span.bytes)
    }
}
