import Wire

/// `a=rid:<rid-id> <send|recv> [pt=<fmt>,...;<restriction>=<value>;...]`
/// (RFC 8851 section 10). The payload type list is parsed; the other
/// restrictions (`max-width`, `max-height`, `max-fps`, `max-br`, ...) are
/// kept as name/value pairs in order.
package struct RIDDescription: Equatable, Sendable {
    package enum RIDDirection: String, Equatable, Sendable { case send, recv }

    package struct Restriction: Equatable, Sendable {
        package var name: String
        package var value: String?
        package init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    package var id: RID
    package var direction: RIDDirection
    package var payloadTypes: [PayloadType]
    package var restrictions: [Restriction]

    package init(id: RID, direction: RIDDirection, payloadTypes: [PayloadType] = [], restrictions: [Restriction] = []) {
        self.id = id
        self.direction = direction
        self.payloadTypes = payloadTypes
        self.restrictions = restrictions
    }

    /// The value of restriction `name` read as a number (`max-width`, ...).
    package func numericRestriction(_ name: String) -> UInt64? {
        for r in restrictions where r.name == name { return r.value.flatMap { decimal(Substring($0), as: UInt64.self) } }
        return nil
    }

    static func parse(_ text: Substring, line: Int) throws(SDPParseError) -> RIDDescription {
        let (idText, afterID) = splitOnce(text, " ")
        let id = try parseRID(idText, line: line)
        guard let afterID else { throw .malformed(.rid, line: line) }
        let (directionText, params) = splitOnce(trimmingLeadingSpaces(afterID), " ")
        guard let direction = RIDDirection(rawValue: String(directionText)) else { throw .malformed(.rid, line: line) }
        var out = RIDDescription(id: id, direction: direction)
        guard let params else { return out }
        var sawPT = false
        for piece in pieces(trimmingLeadingSpaces(params), ";") where !piece.isEmpty {
            let (name, value) = splitOnce(piece, "=")
            // rid-param-name = 1*(alpha-numeric / "-")
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(isParamNameScalar) else {
                throw .malformed(.rid, line: line)
            }
            if name == "pt" {
                guard !sawPT, let value else { throw .malformed(.rid, line: line) }
                sawPT = true
                for p in pieces(value, ",") { out.payloadTypes.append(try parsePayloadType(p, line: line)) }
            } else {
                out.restrictions.append(Restriction(name: String(name), value: value.map(String.init)))
            }
        }
        return out
    }

    package var text: String {
        var s = "\(id) \(direction.rawValue)"
        var params: [String] = []
        if !payloadTypes.isEmpty { params.append("pt=" + payloadTypes.map { "\($0.rawValue)" }.joined(separator: ",")) }
        for r in restrictions { params.append(r.value.map { "\(r.name)=\($0)" } ?? r.name) }
        if !params.isEmpty { s += " " + params.joined(separator: ";") }
        return s
    }
}

private func isParamNameScalar(_ c: Unicode.Scalar) -> Bool {
    ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "-"
}
