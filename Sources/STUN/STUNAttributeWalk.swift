import Wire

/// The framing that `STUNMessage.parse` and `STUNMessageView` share: the
/// header checks and the attribute walk, with the rules that do not depend
/// on what an attribute means (RFC 8489 sections 5 and 14):
/// - the header length is a multiple of 4 and equals the bytes present
///   after the 20-byte header: one datagram, one message;
/// - every attribute value plus its padding to 4 bytes lies inside the
///   message;
/// - at most `STUNMessage.maxAttributes` attributes, counting skipped ones;
/// - nothing may follow FINGERPRINT (an error);
/// - after MESSAGE-INTEGRITY only MESSAGE-INTEGRITY-SHA256 and FINGERPRINT
///   are yielded, after MESSAGE-INTEGRITY-SHA256 only FINGERPRINT: what
///   follows an integrity attribute is not covered by it (sections 14.5
///   and 14.6), so it is skipped.
///
/// It holds offsets only, never the bytes: each call takes the same bytes
/// again, so it is an ordinary value with no lifetime to track.
struct STUNAttributeWalk {
    let type: STUNMessageType
    let transactionID: TransactionID
    /// Bytes of the whole message, header included.
    let byteCount: Int
    /// Every attribute walked so far, including skipped ones.
    private(set) var attributeCount = 0
    private var offset = STUNMessage.headerLength
    private var sawFingerprint = false
    private var sawIntegrity = false
    private var sawIntegritySHA256 = false

    /// Checks the header (RFC 8489 section 5).
    init(_ bytes: RawSpan) throws(STUNParseError) {
        var reader = ByteReader(bytes)
        let rawType = try reader.uint16(or: STUNParseError.truncated)
        let length = Int(try reader.uint16(or: STUNParseError.truncated))
        let cookie = try reader.uint32(or: STUNParseError.truncated)
        let idHigh = try reader.uint32(or: STUNParseError.truncated)
        let idLow = try reader.uint64(or: STUNParseError.truncated)
        guard rawType & 0xC000 == 0 else { throw .notSTUN }
        guard cookie == STUNMessage.magicCookie else { throw .badMagicCookie }
        guard length % 4 == 0 else { throw .lengthNotMultipleOfFour }
        guard reader.remaining == length else { throw .lengthMismatch }
        type = STUNMessageType(rawValue: rawType)
        transactionID = TransactionID(high: idHigh, low: idLow)
        byteCount = STUNMessage.headerLength + length
    }

    /// The next attribute the caller must process, or nil at the end.
    /// `bytes` must be the bytes `init` checked. The caller validates the
    /// value and throws on a bad one, which ends the walk; a FINGERPRINT or
    /// integrity attribute yielded here counts as seen.
    mutating func next(in bytes: RawSpan) throws(STUNParseError) -> (STUNAttributeType, STUNMessage.AttributeLocation)? {
        while offset < byteCount {
            var reader = ByteReader(bytes, offset: offset)
            let start = offset
            let type = STUNAttributeType(try reader.uint16(or: STUNParseError.attributeOverrun))
            let valueLength = Int(try reader.uint16(or: STUNParseError.attributeOverrun))
            let paddedLength = (valueLength + 3) & ~3
            guard reader.canRead(paddedLength) else { throw .attributeOverrun }
            offset = start + 4 + paddedLength

            attributeCount += 1
            guard attributeCount <= STUNMessage.maxAttributes else { throw .tooManyAttributes }
            guard !sawFingerprint else { throw .attributeAfterFingerprint }
            if sawIntegritySHA256, type != .fingerprint { continue }
            if sawIntegrity, type != .fingerprint, type != .messageIntegritySHA256 { continue }
            switch type {
            case .fingerprint: sawFingerprint = true
            case .messageIntegrity: sawIntegrity = true
            case .messageIntegritySHA256: sawIntegritySHA256 = true
            default: break
            }
            return (type, STUNMessage.AttributeLocation(offset: start, valueLength: valueLength))
        }
        return nil
    }

    /// A reader over exactly the value of the attribute at `location`, which
    /// `next(in:)` has checked lies inside `bytes`.
    @_lifetime(copy bytes)
    static func value(_ bytes: RawSpan, at location: STUNMessage.AttributeLocation) -> ByteReader {
        ByteReader(bytes.extracting(location.valueRange))
    }
}
