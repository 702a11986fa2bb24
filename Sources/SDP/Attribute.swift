import Wire

/// One `a=` line (RFC 8866 section 5.13), typed where WebRTC needs it.
/// Sections keep their attributes in this list in the order they were
/// written, so serialisation reproduces the order; unknown attributes stay
/// as `.other` and are written back unchanged.
///
/// A known property attribute written with a value (`a=rtcp-mux:x`) is not
/// that attribute and is kept as `.other`; a known value attribute without
/// its value (`a=mid`) is an error.
package enum Attribute: Equatable, Sendable {
    // Session or media level.
    case group(Group)
    case msidSemantic(MSIDSemantic)
    case iceLite
    case iceUfrag(String)
    case icePwd(String)
    case iceOptions([String])
    case fingerprint(Fingerprint)
    case setup(SetupRole)
    case extmapAllowMixed
    // Media level.
    case mid(MID)
    case msid(MediaStreamID)
    case rtpmap(RTPMap)
    case fmtp(FormatParameters)
    case rtcpFeedback(RTCPFeedback)
    case extmap(ExtensionMap)
    case ssrc(SourceAttribute)
    case ssrcGroup(SourceGroup)
    case rid(RIDDescription)
    case simulcast(Simulcast)
    case candidate(Candidate)
    case endOfCandidates
    case rtcpMux
    case rtcpReducedSize
    /// `a=rtcp:<port> [<nettype> <addrtype> <address>]` (RFC 3605 section 2.1).
    case rtcp(port: UInt16, address: ConnectionData?)
    case direction(Direction)
    /// `a=sctp-port` (RFC 8841 section 5).
    case sctpPort(UInt16)
    /// `a=max-message-size` in bytes (RFC 8841 section 6).
    case maxMessageSize(UInt64)
    /// `a=bundle-only` (RFC 8843 section 6).
    case bundleOnly
    case other(name: String, value: String?)

    static func parse(name: Substring, value: Substring?, line: Int) throws(SDPParseError) -> Attribute {
        guard let value else { return flag(name) }
        switch name {
        case "group": return .group(try Group.parse(value, line: line))
        case "msid-semantic": return .msidSemantic(try MSIDSemantic.parse(value, line: line))
        case "ice-ufrag": return .iceUfrag(try token(value, .iceUfrag, line: line))
        case "ice-pwd": return .icePwd(try token(value, .icePwd, line: line))
        case "ice-options":
            let f = fields(value)
            guard !f.isEmpty else { throw .malformed(.iceOptions, line: line) }
            return .iceOptions(f.map(String.init))
        case "fingerprint": return .fingerprint(try Fingerprint.parse(value, line: line))
        case "setup":
            guard let role = SetupRole(rawValue: String(value)) else { throw .malformed(.setup, line: line) }
            return .setup(role)
        case "mid": return .mid(try parseMID(value, line: line))
        case "msid": return .msid(try MediaStreamID.parse(value, line: line))
        case "rtpmap": return .rtpmap(try RTPMap.parse(value, line: line))
        case "fmtp": return .fmtp(try FormatParameters.parse(value, line: line))
        case "rtcp-fb": return .rtcpFeedback(try RTCPFeedback.parse(value, line: line))
        case "extmap": return .extmap(try ExtensionMap.parse(value, line: line))
        case "ssrc": return .ssrc(try SourceAttribute.parse(value, line: line))
        case "ssrc-group": return .ssrcGroup(try SourceGroup.parse(value, line: line))
        case "rid": return .rid(try RIDDescription.parse(value, line: line))
        case "simulcast": return .simulcast(try Simulcast.parse(value, line: line))
        case "candidate": return .candidate(try Candidate.parse(attributeValue: value, line: line))
        case "rtcp":
            let f = fields(value)
            guard let first = f.first, let port = decimal(first, as: UInt16.self), f.count == 1 || f.count == 4 else {
                throw .malformed(.rtcp, line: line)
            }
            return .rtcp(port: port, address: f.count == 4 ? try ConnectionData.parse(f.dropFirst(), .rtcp, line: line) : nil)
        case "sctp-port":
            guard let p = decimal(value, as: UInt16.self) else { throw .malformed(.sctpPort, line: line) }
            return .sctpPort(p)
        case "max-message-size":
            guard let n = decimal(value, as: UInt64.self) else { throw .malformed(.maxMessageSize, line: line) }
            return .maxMessageSize(n)
        default: return .other(name: String(name), value: String(value))
        }
    }

    private static func flag(_ name: Substring) -> Attribute {
        switch name {
        case "ice-lite": .iceLite
        case "extmap-allow-mixed": .extmapAllowMixed
        case "end-of-candidates": .endOfCandidates
        case "rtcp-mux": .rtcpMux
        case "rtcp-rsize": .rtcpReducedSize
        case "bundle-only": .bundleOnly
        case "sendrecv": .direction(.sendrecv)
        case "sendonly": .direction(.sendonly)
        case "recvonly": .direction(.recvonly)
        case "inactive": .direction(.inactive)
        default: .other(name: String(name), value: nil)
        }
    }

    /// The text after `a=`.
    package var text: String {
        switch self {
        case .group(let g): "group:\(g.text)"
        case .msidSemantic(let m): "msid-semantic:\(m.text)"
        case .iceLite: "ice-lite"
        case .iceUfrag(let s): "ice-ufrag:\(s)"
        case .icePwd(let s): "ice-pwd:\(s)"
        case .iceOptions(let o): "ice-options:\(o.joined(separator: " "))"
        case .fingerprint(let f): "fingerprint:\(f.value)"
        case .setup(let r): "setup:\(r.rawValue)"
        case .extmapAllowMixed: "extmap-allow-mixed"
        case .mid(let m): "mid:\(m)"
        case .msid(let m): "msid:\(m.text)"
        case .rtpmap(let r): "rtpmap:\(r.value)"
        case .fmtp(let f): "fmtp:\(f.value)"
        case .rtcpFeedback(let f): "rtcp-fb:\(f.value)"
        case .extmap(let e): "extmap:\(e.value)"
        case .ssrc(let s): "ssrc:\(s.text)"
        case .ssrcGroup(let g): "ssrc-group:\(g.text)"
        case .rid(let r): "rid:\(r.text)"
        case .simulcast(let s): "simulcast:\(s.text)"
        case .candidate(let c): "candidate:\(c.value)"
        case .endOfCandidates: "end-of-candidates"
        case .rtcpMux: "rtcp-mux"
        case .rtcpReducedSize: "rtcp-rsize"
        case .rtcp(let port, let address): address.map { "rtcp:\(port) \($0.value)" } ?? "rtcp:\(port)"
        case .direction(let d): d.rawValue
        case .sctpPort(let p): "sctp-port:\(p)"
        case .maxMessageSize(let n): "max-message-size:\(n)"
        case .bundleOnly: "bundle-only"
        case .other(let name, let value): value.map { "\(name):\($0)" } ?? name
        }
    }
}
