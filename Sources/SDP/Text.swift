import Wire

// Small text helpers shared by the line parsers. SDP fields are separated by
// single spaces (RFC 8866 section 9); we accept runs of spaces and always
// write one, which keeps parse -> serialize -> parse stable.
//
// All splitting works on Unicode scalars, not Characters: a space or colon
// followed by a combining mark is one Character, and splitting on
// Characters would then depend on what was written next to the separator.

func fields(_ s: Substring) -> [Substring] {
    s.unicodeScalars.split(separator: " ", omittingEmptySubsequences: true).map { Substring($0) }
}

/// Splits on every occurrence of `separator`, keeping empty pieces.
func pieces(_ s: Substring, _ separator: Unicode.Scalar) -> [Substring] {
    s.unicodeScalars.split(separator: separator, omittingEmptySubsequences: false).map { Substring($0) }
}

/// Splits at the first occurrence of `separator`.
func splitOnce(_ s: Substring, _ separator: Unicode.Scalar) -> (Substring, Substring?) {
    let u = s.unicodeScalars
    guard let i = u.firstIndex(of: separator) else { return (s, nil) }
    return (Substring(u[u.startIndex..<i]), Substring(u[u.index(after: i)...]))
}

/// Drops leading spaces.
func trimmingLeadingSpaces(_ s: Substring) -> Substring {
    Substring(s.unicodeScalars.drop(while: { $0 == " " }))
}

func hasSpace(_ s: Substring) -> Bool { s.unicodeScalars.contains(" ") }

/// A decimal number made only of ASCII digits: no sign, no overflow.
func decimal<T: FixedWidthInteger & UnsignedInteger>(_ s: Substring, as _: T.Type = T.self) -> T? {
    guard !s.isEmpty, s.utf8.count <= 20 else { return nil }
    var v: T = 0
    for b in s.utf8 {
        guard b >= 0x30, b <= 0x39 else { return nil }
        let (m, o1) = v.multipliedReportingOverflow(by: 10)
        let (a, o2) = m.addingReportingOverflow(T(b - 0x30))
        guard !o1, !o2 else { return nil }
        v = a
    }
    return v
}

func parsePayloadType(_ s: Substring, line: Int) throws(SDPParseError) -> PayloadType {
    guard let n = decimal(s, as: UInt64.self), n <= 127, let pt = PayloadType(rawValue: UInt8(n)) else {
        throw .payloadTypeOutOfRange(line: line)
    }
    return pt
}

func parseMID(_ s: Substring, line: Int, field: SDPField = .mid) throws(SDPParseError) -> MID {
    guard !s.isEmpty else { throw .malformed(field, line: line) }
    guard let m = MID(String(s)) else { throw .identifierTooLong(line: line) }
    return m
}

/// rid-id = 1*(alpha-numeric / "-" / "_") (RFC 8851 section 10).
func parseRID(_ s: Substring, line: Int) throws(SDPParseError) -> RID {
    guard !s.isEmpty else { throw .invalidRID(line: line) }
    for b in s.utf8 {
        let ok =
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || b == 0x2D || b == 0x5F
        guard ok else { throw .invalidRID(line: line) }
    }
    guard let r = RID(String(s)) else { throw .identifierTooLong(line: line) }
    return r
}

/// A non-empty field without spaces, as most SDP tokens are.
func token(_ s: Substring, _ field: SDPField, line: Int) throws(SDPParseError) -> String {
    guard !s.isEmpty, !hasSpace(s) else { throw .malformed(field, line: line) }
    return String(s)
}
