import Wire

/// `a=simulcast:send <list> [recv <list>]` (RFC 8853 section 5.1). A list
/// is `;`-separated streams, each a `,`-separated set of alternative rids,
/// each rid optionally paused with a leading `~`.
package struct Simulcast: Equatable, Sendable {
    package struct Stream: Equatable, Sendable {
        package var rid: RID
        package var paused: Bool
        package init(rid: RID, paused: Bool = false) {
            self.rid = rid
            self.paused = paused
        }
    }

    /// Streams we would send, best first as the offerer ordered them; each
    /// entry lists the alternatives for one stream.
    package var send: [[Stream]]
    package var recv: [[Stream]]

    package init(send: [[Stream]] = [], recv: [[Stream]] = []) {
        self.send = send
        self.recv = recv
    }

    /// `send` as plain rids, first alternative of each stream.
    package var sendRIDs: [RID] { send.compactMap { $0.first?.rid } }
    package var recvRIDs: [RID] { recv.compactMap { $0.first?.rid } }

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

    package var text: String {
        func list(_ l: [[Stream]]) -> String {
            l.map { $0.map { ($0.paused ? "~" : "") + $0.rid.description }.joined(separator: ",") }.joined(separator: ";")
        }
        var parts: [String] = []
        if !send.isEmpty { parts.append("send " + list(send)) }
        if !recv.isEmpty { parts.append("recv " + list(recv)) }
        return parts.joined(separator: " ")
    }
}
