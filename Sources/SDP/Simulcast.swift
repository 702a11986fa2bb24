import Wire

/// `a=simulcast:send <list> [recv <list>]` (RFC 8853 section 5.1). A list
/// is `;`-separated streams, each a `,`-separated set of alternative rids,
/// each rid optionally paused with a leading `~`.
public struct Simulcast: Equatable, Sendable {
    public struct Stream: Equatable, Sendable {
        public var rid: RID
        public var paused: Bool
        public init(rid: RID, paused: Bool = false) {
            self.rid = rid
            self.paused = paused
        }
    }

    /// Streams we would send, best first as the offerer ordered them; each
    /// entry lists the alternatives for one stream.
    public var send: [[Stream]]
    public var recv: [[Stream]]

    public init(send: [[Stream]] = [], recv: [[Stream]] = []) {
        self.send = send
        self.recv = recv
    }

    /// `send` as plain rids, first alternative of each stream.
    public var sendRIDs: [RID] { send.compactMap { $0.first?.rid } }
    public var recvRIDs: [RID] { recv.compactMap { $0.first?.rid } }

    static func parse(_ text: Substring, line: Int) throws(SDPParseError) -> Simulcast {
        let f = fields(text)
        guard f.count == 2 || f.count == 4 else { throw .malformed(.simulcast, line: line) }
        var out = Simulcast()
        var sawSend = false, sawRecv = false
        var i = 0
        while i + 1 < f.count {
            let list = try parseList(f[i + 1], line: line)
            switch f[i] {
            case "send" where !sawSend: sawSend = true; out.send = list
            case "recv" where !sawRecv: sawRecv = true; out.recv = list
            default: throw .malformed(.simulcast, line: line)
            }
            i += 2
        }
        return out
    }

    private static func parseList(_ text: Substring, line: Int) throws(SDPParseError) -> [[Stream]] {
        var list: [[Stream]] = []
        for streamText in pieces(text, ";") {
            var alternatives: [Stream] = []
            for alt in pieces(streamText, ",") {
                let paused = alt.unicodeScalars.first == "~"
                let idText = paused ? Substring(alt.unicodeScalars.dropFirst()) : alt
                alternatives.append(Stream(rid: try parseRID(idText, line: line), paused: paused))
            }
            list.append(alternatives)
        }
        return list
    }

    public var text: String {
        func list(_ l: [[Stream]]) -> String {
            l.map { $0.map { ($0.paused ? "~" : "") + $0.rid.description }.joined(separator: ",") }.joined(separator: ";")
        }
        var parts: [String] = []
        if !send.isEmpty { parts.append("send " + list(send)) }
        if !recv.isEmpty { parts.append("recv " + list(recv)) }
        return parts.joined(separator: " ")
    }
}
