/// Why a datagram was not accepted as a STUN message. Bad network input is
/// counted and dropped by the caller; nothing here traps.
package enum STUNParseError: Error, Hashable, Sendable {
    /// Fewer than the 20 header bytes.
    case truncated
    /// One of the two top bits of the first byte is set (RFC 8489 section 5):
    /// not STUN at all (RFC 7983 sends it to DTLS, RTP or RTCP instead).
    case notSTUN
    /// The magic cookie is not 0x2112A442 (e.g. a classic RFC 3489 message).
    case badMagicCookie
    /// The header's message length is not a multiple of 4 (RFC 8489 section 5).
    case lengthNotMultipleOfFour
    /// The header's message length disagrees with the bytes present.
    case lengthMismatch
    /// An attribute's value plus padding runs past the end of the message.
    case attributeOverrun
    /// An attribute follows FINGERPRINT, which must be last (RFC 8489 section 14.7).
    case attributeAfterFingerprint
    /// More attributes than `STUNMessage.maxAttributes`.
    case tooManyAttributes
    /// A known attribute with the wrong length or an invalid value: a bad
    /// address family, a text value that is too long or not UTF-8, an
    /// ERROR-CODE outside 300...699, and so on.
    case malformedAttribute(STUNAttributeType)
}

/// Why a message could not be built. Only values that the caller chose can
/// cause these; nothing here depends on network input.
package enum STUNBuildError: Error, Hashable, Sendable {
    /// A text attribute (USERNAME, SOFTWARE, reason phrase, REALM, NONCE)
    /// longer than `STUNMessage.maxTextLength` bytes.
    case valueTooLong(STUNAttributeType)
    /// The message would exceed 65535 bytes of attributes.
    case messageTooLong
    /// Nothing may follow FINGERPRINT, and only MESSAGE-INTEGRITY-SHA256 and
    /// FINGERPRINT may follow MESSAGE-INTEGRITY (RFC 8489 section 14.5).
    case attributeOutOfOrder(STUNAttributeType)
    /// MESSAGE-INTEGRITY-SHA256 truncation must be 16...32 and a multiple of 4.
    case invalidTruncation
    /// OpenSSL could not compute the MAC; nothing is sent unauthenticated.
    case cryptoFailure
}
