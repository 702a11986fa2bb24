import Wire

/// `a=ssrc:<ssrc-id> <attribute>[:<value>]` (RFC 5576 section 4.1), e.g.
/// `cname:...` or the legacy `msid:<stream> <track>`.
package struct SourceAttribute: Equatable, Sendable {
    package var ssrc: SSRC
    package var name: String
    /// Everything after the first colon; may contain spaces (`msid`).
    package var value: String?

    package init(ssrc: SSRC, name: String, value: String? = nil) {
        self.ssrc = ssrc
        self.name = name
        self.value = value
    }

    static func parse(_ text: Substring, line: Int) throws(SDPParseError) -> SourceAttribute {
        let (idText, rest) = splitOnce(text, " ")
        guard let n = decimal(idText, as: UInt32.self), let rest else { throw .malformed(.ssrc, line: line) }
        let (name, value) = splitOnce(trimmingLeadingSpaces(rest), ":")
        guard !name.isEmpty else { throw .malformed(.ssrc, line: line) }
        return SourceAttribute(ssrc: SSRC(n), name: String(name), value: value.map(String.init))
    }

    package var text: String {
        var s = "\(ssrc.rawValue) \(name)"
        if let value { s += ":\(value)" }
        return s
    }
}

/// `a=ssrc-group:<semantics> <ssrc-id> ...` (RFC 5576 section 4.2):
/// `SIM` (simulcast layers, low to high), `FID` (media then its RTX,
/// RFC 4588), `FEC-FR` and others kept by name.
package struct SourceGroup: Equatable, Sendable {
    package var semantics: String
    package var ssrcs: [SSRC]

    package static let simulcast = "SIM"
    package static let flowIdentification = "FID"

    package init(semantics: String, ssrcs: [SSRC]) {
        self.semantics = semantics
        self.ssrcs = ssrcs
    }

    static func parse(_ text: Substring, line: Int) throws(SDPParseError) -> SourceGroup {
        let f = fields(text)
        guard f.count >= 2 else { throw .malformed(.ssrcGroup, line: line) }
        var ssrcs: [SSRC] = []
        for s in f.dropFirst() {
            guard let n = decimal(s, as: UInt32.self) else { throw .malformed(.ssrcGroup, line: line) }
            ssrcs.append(SSRC(n))
        }
        return SourceGroup(semantics: String(f[0]), ssrcs: ssrcs)
    }

    package var text: String { ([semantics] + ssrcs.map { "\($0.rawValue)" }).joined(separator: " ") }
}
