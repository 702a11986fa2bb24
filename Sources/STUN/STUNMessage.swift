import Wire

/// A parsed STUN message (RFC 8489) with the attributes ICE needs (RFC 8445
/// section 16.1).
///
/// Parsing is one pass over a borrowed `RawSpan`; the result holds field
/// values and the byte offsets of the integrity and fingerprint attributes,
/// never the bytes themselves. To verify those, pass the same bytes again to
/// `verifyFingerprint(in:)` / `verifyIntegrity(key:in:)`.
///
/// Rules applied while parsing (RFC 8489 sections 5, 14 and 14.5 to 14.7):
/// - the header length is a multiple of 4 and equals the bytes present
///   after the 20-byte header: one datagram, one message;
/// - every attribute value plus its padding to 4 bytes lies inside the
///   message; padding bytes may hold any value and are ignored;
/// - nothing may follow FINGERPRINT (an error);
/// - after MESSAGE-INTEGRITY only MESSAGE-INTEGRITY-SHA256 and FINGERPRINT
///   are processed, after MESSAGE-INTEGRITY-SHA256 only FINGERPRINT; other
///   attributes there are skipped, as they are not covered by the MAC;
/// - of repeated attributes only the first is processed (section 14);
/// - unknown comprehension-optional attributes are skipped; unknown
///   comprehension-required ones are listed in
///   `unknownComprehensionRequired` for a 420 answer (section 6.3.1.1).
package struct STUNMessage: Hashable, Sendable {
    /// RFC 8489 section 5.
    package static let magicCookie: UInt32 = 0x2112_A442
    package static let headerLength = 20
    /// The FINGERPRINT CRC-32 is xored with this ("STUN"), RFC 8489 section 14.7.
    package static let fingerprintXOR: UInt32 = 0x5354_554E
    /// Attributes accepted per message. ICE messages carry fewer than ten;
    /// the bound keeps the work and the unknown-attribute list small.
    package static let maxAttributes = 64
    /// Longest USERNAME, SOFTWARE, REALM, NONCE or reason phrase accepted, in
    /// bytes: 128 characters of up to 6 bytes once decoded, as RFC 8489
    /// sections 14.3, 14.8, 14.9, 14.10 and 14.14 allow a receiver to see.
    package static let maxTextLength = 763

    /// Where an attribute sits in the message, for verification.
    package struct AttributeLocation: Hashable, Sendable {
        /// Offset of the attribute's 4-byte type/length header from the
        /// start of the message.
        package let offset: Int
        /// Length of the value, before padding.
        package let valueLength: Int
        package init(offset: Int, valueLength: Int) {
            self.offset = offset
            self.valueLength = valueLength
        }
        package var valueRange: Range<Int> { offset + 4..<offset + 4 + valueLength }
    }

    package var type: STUNMessageType
    package var transactionID: TransactionID
    /// Bytes of the whole message, header included.
    package var byteCount: Int
    /// Every attribute counted, including skipped ones.
    package var attributeCount: Int

    package var mappedAddress: TransportAddress?
    package var xorMappedAddress: TransportAddress?
    package var username: String?
    package var software: String?
    package var realm: String?
    package var nonce: String?
    package var errorCode: STUNErrorCode?
    /// The contents of an UNKNOWN-ATTRIBUTES attribute (in a 420 response).
    package var unknownAttributes: [STUNAttributeType]?
    package var priority: UInt32?
    package var useCandidate: Bool
    package var iceControlling: UInt64?
    package var iceControlled: UInt64?

    /// TURN attributes (RFC 8656 section 18); see `STUNMessage+TURN.swift`.
    package var turn = TURNAttributes()

    package var messageIntegrity: AttributeLocation?
    package var messageIntegritySHA256: AttributeLocation?
    package var fingerprint: AttributeLocation?

    /// Comprehension-required attribute types this parser does not know,
    /// without duplicates, in order of appearance. A request with any of
    /// them must be answered with 420 (RFC 8489 section 6.3.1.1).
    package var unknownComprehensionRequired: [STUNAttributeType]

    /// An empty message, for building values to compare against.
    package init(type: STUNMessageType, transactionID: TransactionID) {
        self.type = type
        self.transactionID = transactionID
        byteCount = Self.headerLength
        attributeCount = 0
        useCandidate = false
        unknownComprehensionRequired = []
    }

    /// A cheap test for RFC 7983 demultiplexing and for rejecting junk before
    /// a full parse: top two bits zero, magic cookie present, length a
    /// multiple of 4 that matches the datagram.
    package static func looksLikeSTUN(_ bytes: RawSpan) -> Bool {
        guard bytes.byteCount >= headerLength, bytes.byte(at: 0) & 0xC0 == 0 else { return false }
        let length = Int(bytes.byte(at: 2)) << 8 | Int(bytes.byte(at: 3))
        let cookie =
            UInt32(bytes.byte(at: 4)) << 24 | UInt32(bytes.byte(at: 5)) << 16
            | UInt32(bytes.byte(at: 6)) << 8 | UInt32(bytes.byte(at: 7))
        return cookie == magicCookie && length % 4 == 0 && headerLength + length == bytes.byteCount
    }

    package static func looksLikeSTUN(_ bytes: [UInt8]) -> Bool { looksLikeSTUN(bytes.span.bytes) }

    /// Parses one whole STUN message held in an array (the control plane's
    /// usual container).
    package static func parse(_ bytes: [UInt8]) throws(STUNParseError) -> STUNMessage {
        try parse(bytes.span.bytes)
    }

    /// Parses one whole STUN message.
    package static func parse(_ bytes: RawSpan) throws(STUNParseError) -> STUNMessage {
        var walk = try STUNAttributeWalk(bytes)
        var message = STUNMessage(type: walk.type, transactionID: walk.transactionID)
        message.byteCount = walk.byteCount
        while let (type, location) = try walk.next(in: bytes) {
            var value = STUNAttributeWalk.value(bytes, at: location)
            try message.process(type, &value, at: location)
        }
        message.attributeCount = walk.attributeCount
        return message
    }

    /// Applies one attribute that the walk yielded; `value` spans exactly
    /// its value bytes. `STUNMessageView` applies the same checks
    /// (`checkLength`, `transportAddress`, `validateText`, `errorCode`,
    /// `TURNAttributes.process`) without keeping the values.
    private mutating func process(
        _ type: STUNAttributeType, _ value: inout ByteReader, at location: AttributeLocation
    ) throws(STUNParseError) {
        let length = location.valueLength
        switch type {
        case .fingerprint:
            try Self.checkLength(type, length)
            fingerprint = location
        case .messageIntegrity:
            try Self.checkLength(type, length)
            messageIntegrity = location
        case .messageIntegritySHA256:
            try Self.checkLength(type, length)
            messageIntegritySHA256 = location
        case .mappedAddress:
            guard mappedAddress == nil else { return }
            mappedAddress = try Self.transportAddress(&value, type: type)
        case .xorMappedAddress:
            guard xorMappedAddress == nil else { return }
            xorMappedAddress = try Self.transportAddress(&value, type: type).xored(with: transactionID)
        case .username:
            guard username == nil else { return }
            username = try Self.text(&value, type: type)
        case .software:
            guard software == nil else { return }
            software = try Self.text(&value, type: type)
        case .realm:
            guard realm == nil else { return }
            realm = try Self.text(&value, type: type)
        case .nonce:
            guard nonce == nil else { return }
            nonce = try Self.text(&value, type: type)
        case .errorCode:
            guard errorCode == nil else { return }
            let code = try Self.errorCode(&value)
            errorCode = STUNErrorCode(uncheckedCode: code, reason: try Self.text(&value, type: .errorCode))
        case .unknownAttributes:
            guard unknownAttributes == nil else { return }
            try Self.checkLength(type, length)
            var types: [STUNAttributeType] = []
            types.reserveCapacity(location.valueLength / 2)
            while !value.isAtEnd {
                types.append(STUNAttributeType(try value.uint16(or: STUNParseError.malformedAttribute(type))))
            }
            unknownAttributes = types
        case .priority:
            guard priority == nil else { return }
            try Self.checkLength(type, length)
            priority = try value.uint32(or: STUNParseError.malformedAttribute(type))
        case .useCandidate:
            try Self.checkLength(type, length)
            useCandidate = true
        case .iceControlling:
            guard iceControlling == nil else { return }
            try Self.checkLength(type, length)
            iceControlling = try value.uint64(or: STUNParseError.malformedAttribute(type))
        case .iceControlled:
            guard iceControlled == nil else { return }
            try Self.checkLength(type, length)
            iceControlled = try value.uint64(or: STUNParseError.malformedAttribute(type))
        default:
            if try turn.process(type, &value, location: location, transactionID: transactionID) { return }
            if type.isComprehensionRequired, !unknownComprehensionRequired.contains(type) {
                unknownComprehensionRequired.append(type)
            }
        }
    }

    /// The value lengths RFC 8489 and RFC 8445 fix (sections 14.5 to 14.7
    /// and 14.13; RFC 8445 sections 7.1.1 to 7.1.3), checked before a
    /// value is read. Only the first of a repeated attribute is processed
    /// (section 14), so only it is checked, except FINGERPRINT and
    /// MESSAGE-INTEGRITY (the walk ends or skips after them) and
    /// USE-CANDIDATE (no value to keep).
    static func checkLength(_ type: STUNAttributeType, _ valueLength: Int) throws(STUNParseError) {
        let valid: Bool =
            switch type {
            case .fingerprint, .priority: valueLength == 4
            case .messageIntegrity: valueLength == 20
            case .messageIntegritySHA256: (16...32).contains(valueLength) && valueLength % 4 == 0
            case .unknownAttributes: valueLength % 2 == 0
            case .useCandidate: valueLength == 0
            case .iceControlling, .iceControlled: valueLength == 8
            default: true
            }
        guard valid else { throw .malformedAttribute(type) }
    }

    /// MAPPED-ADDRESS layout (RFC 8489 section 14.1): one ignored byte,
    /// family, port, then 4 or 16 address bytes; the length must fit the
    /// family exactly.
    static func transportAddress(
        _ value: inout ByteReader, type: STUNAttributeType
    ) throws(STUNParseError) -> TransportAddress {
        let bad = STUNParseError.malformedAttribute(type)
        try value.skip(1, or: bad)
        guard let family = TransportAddress.Family(rawValue: try value.uint8(or: bad)) else { throw bad }
        let port = try value.uint16(or: bad)
        guard value.remaining == family.addressLength else { throw bad }
        switch family {
        case .ipv4:
            return TransportAddress(ipv4: try value.uint32(or: bad), port: port)
        case .ipv6:
            let high = try value.uint64(or: bad)
            return TransportAddress(ipv6: high, try value.uint64(or: bad), port: port)
        }
    }

    /// A UTF-8 text value of at most `maxTextLength` bytes.
    private static func text(_ value: inout ByteReader, type: STUNAttributeType) throws(STUNParseError) -> String {
        try validateText(value, type: type)
        let bytes = try value.bytesArray(value.remaining, or: STUNParseError.malformedAttribute(type))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Checks that what is left in `value` is a text value: at most
    /// `maxTextLength` bytes of valid UTF-8 (RFC 8489 section 14.3 and
    /// its siblings), without copying it.
    static func validateText(_ value: borrowing ByteReader, type: STUNAttributeType) throws(STUNParseError) {
        guard value.remaining <= maxTextLength else { throw .malformedAttribute(type) }
        let valid = value.bytes.extracting(value.offset...).withUnsafeBytes { raw in
            (try? UTF8Span(validating: Span(_unsafeElements: raw.assumingMemoryBound(to: UInt8.self)))) != nil
        }
        guard valid else { throw .malformedAttribute(type) }
    }

    /// ERROR-CODE (RFC 8489 section 14.8): 21 reserved bits, a 3-bit class
    /// 3...6, an 8-bit number 0...99; returns the code, and leaves `value`
    /// at the reason phrase.
    static func errorCode(_ value: inout ByteReader) throws(STUNParseError) -> UInt16 {
        let bad = STUNParseError.malformedAttribute(.errorCode)
        try value.skip(2, or: bad)
        let errorClass = UInt16(try value.uint8(or: bad) & 0x07)
        let number = UInt16(try value.uint8(or: bad))
        guard (3...6).contains(errorClass), number <= 99 else { throw bad }
        return errorClass * 100 + number
    }
}
