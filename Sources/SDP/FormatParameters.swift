import Wire

/// `a=fmtp:<format> <format specific parameters>` (RFC 8866 section 6.15).
/// The parameter text is kept exactly as written (its meaning belongs to the
/// codec's payload format); `parameters` reads it as the usual
/// `key=value;key=value` list.
package struct FormatParameters: Equatable, Sendable {
    package var payloadType: PayloadType
    /// Everything after the space that follows the payload type.
    package var raw: String

    package init(payloadType: PayloadType, raw: String) {
        self.payloadType = payloadType
        self.raw = raw
    }

    /// Builds the `key=value;key=value` text from pairs, in order.
    package init(payloadType: PayloadType, parameters: [(String, String?)]) {
        self.payloadType = payloadType
        raw = parameters.map { k, v in v.map { "\(k)=\($0)" } ?? k }.joined(separator: ";")
    }

    package struct Parameter: Equatable, Sendable {
        package var name: String
        /// Nil for an entry without `=` (such as RED's `111/111`).
        package var value: String?
    }

    /// The `;`-separated entries with surrounding spaces removed, in order.
    package var parameters: [Parameter] {
        var out: [Parameter] = []
        for piece in pieces(Substring(raw), ";") {
            let t = trimSpaces(piece)
            guard !t.isEmpty else { continue }
            let (k, v) = splitOnce(t, "=")
            out.append(Parameter(name: String(trimSpaces(k)), value: v.map { String(trimSpaces($0)) }))
        }
        return out
    }

    /// The value of the first parameter named `name` (names compare
    /// case-insensitively, RFC 4855 section 3).
    package subscript(name: String) -> String? {
        let wanted = name.lowercased()
        for p in parameters where p.name.lowercased() == wanted { return p.value }
        return nil
    }

    static func parse(_ value: Substring, line: Int) throws(SDPParseError) -> FormatParameters {
        let (format, rest) = splitOnce(value, " ")
        let pt = try parsePayloadType(format, line: line)
        return FormatParameters(payloadType: pt, raw: rest.map(String.init) ?? "")
    }

    package var value: String { raw.isEmpty ? "\(payloadType.rawValue)" : "\(payloadType.rawValue) \(raw)" }
}

private func trimSpaces(_ s: Substring) -> Substring {
    let u = s.unicodeScalars
    guard let first = u.firstIndex(where: { $0 != " " }), let last = u.lastIndex(where: { $0 != " " }) else {
        return ""
    }
    return Substring(u[first...last])
}
