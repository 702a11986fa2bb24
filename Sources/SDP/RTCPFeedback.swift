import Wire

/// `a=rtcp-fb:<pt or *> <type> [<parameters>]` (RFC 4585 section 4.2),
/// e.g. `nack pli`, `ccm fir`, `transport-cc`, `goog-remb`.
package struct RTCPFeedback: Equatable, Sendable {
    /// Nil for `*`: every payload type of the section.
    package var payloadType: PayloadType?
    package var type: String
    /// The rest of the line (`pli`, `fir`, `smaxpr=120`), single-spaced.
    package var parameter: String?

    package init(payloadType: PayloadType?, type: String, parameter: String? = nil) {
        self.payloadType = payloadType
        self.type = type
        self.parameter = parameter
    }

    static func parse(_ value: Substring, line: Int) throws(SDPParseError) -> RTCPFeedback {
        let f = fields(value)
        guard f.count >= 2 else { throw .malformed(.rtcpFeedback, line: line) }
        let pt: PayloadType? = f[0] == "*" ? nil : try parsePayloadType(f[0], line: line)
        let rest = f.dropFirst(2).joined(separator: " ")
        return RTCPFeedback(payloadType: pt, type: String(f[1]), parameter: rest.isEmpty ? nil : rest)
    }

    package var value: String {
        var s = payloadType.map { "\($0.rawValue)" } ?? "*"
        s += " \(type)"
        if let parameter { s += " \(parameter)" }
        return s
    }
}
