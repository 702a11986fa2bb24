/// Why an SDP text was rejected. Every case that concerns one line carries
/// its 1-based line number (blank lines are counted), so the peer can log
/// something a human can find in the offer.
package enum SDPParseError: Error, Equatable, Sendable {
    /// The whole description is larger than `SessionDescription.maxBytes` (256 KiB).
    case tooLarge(byteCount: Int)
    /// More than `SessionDescription.maxLines` (10,000) lines; `line` is the first one over.
    case tooManyLines(line: Int)
    /// More `m=` lines than the caller allows (`parse(_:maxMediaSections:)`);
    /// `line` is the first one over.
    case tooManyMediaSections(line: Int)
    /// One line is longer than `SessionDescription.maxLineBytes` (16 KiB).
    case lineTooLong(line: Int)
    /// A NUL byte, which RFC 8866 section 5 forbids anywhere in the text.
    case nulByte(line: Int)
    /// The line is not valid UTF-8 (RFC 8866 section 5: ISO 10646 in UTF-8).
    case invalidUTF8(line: Int)
    /// A line that is not `<type>=<value>` with a one-character type (RFC 8866 section 5).
    case missingEquals(line: Int)
    /// The first line is not `v=` (RFC 8866 section 5.1).
    case missingVersion
    /// A required session line is absent (`o=` or `s=`).
    case missingField(SDPField)
    /// A line that may not appear here: `v=`, `o=`, `s=` twice or after `m=`,
    /// `t=` inside a media section, a second `c=` in one section.
    case unexpectedLine(line: Int)
    /// A line or attribute whose value does not follow its grammar.
    case malformed(SDPField, line: Int)
    /// A `mid`, `rid` or group tag longer than 16 bytes: Wire's `MID` and
    /// `RID` hold at most 16 bytes (what an RFC 8285 one-byte header
    /// extension element can carry), so longer identifiers are refused.
    case identifierTooLong(line: Int)
    /// A rid-id with characters outside ALPHA / DIGIT / "-" / "_" (RFC 8851 section 10).
    case invalidRID(line: Int)
    /// A payload type that is not a number in 0...127 (RFC 3550 section 5.1).
    case payloadTypeOutOfRange(line: Int)
    /// An extmap id outside 1...255 (RFC 8285 section 5).
    case extensionIDOutOfRange(line: Int)
    /// A fingerprint that is not colon-separated hex pairs of the length
    /// its hash function gives (RFC 8122 section 5).
    case invalidFingerprint(line: Int)
    /// `a=simulcast` names a rid that has no `a=rid` line with the matching
    /// direction in its media section (RFC 8853 section 5.1).
    case simulcastUnknownRID(line: Int)
}

/// The SDP line or attribute a `SDPParseError` refers to.
package enum SDPField: Equatable, Sendable {
    case version, origin, sessionName, timing, connection, bandwidth, media
    case group, msidSemantic, msid, mid, iceUfrag, icePwd, iceOptions, fingerprint, setup
    case rtpmap, fmtp, rtcpFeedback, extmap, ssrc, ssrcGroup, rid, simulcast, candidate
    case rtcp, sctpPort, maxMessageSize
}
