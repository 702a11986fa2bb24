/// One `--url`: a server (or a cluster node) a share of the bots connect
/// to, as written and in parts.
struct ServerURL: Equatable {
    /// As given on the command line: the report's name for this server.
    var text: String
    /// The host as written: an IP literal or a name (resolved with
    /// getaddrinfo when roombot starts).
    var host: String
    var port: UInt16
    /// `wss://` or `https://`: TLS to the server.
    var secure: Bool
    var path = "/rtc"

    /// `ws://`, `wss://`, `http://` or `https://`, then `HOST[:PORT][/PATH]`;
    /// HOST an IPv4 literal, `[IPv6]` or a name (RFC 3986 section 3.2.2).
    /// The port defaults to the scheme's (RFC 6455 section 3: 80 and 443).
    init(parsing url: String) throws(BotOptions.Invalid) {
        typealias Invalid = BotOptions.Invalid
        text = url
        var rest = Substring(url)
        let schemes: [(prefix: String, secure: Bool)] = [
            ("ws://", false), ("wss://", true), ("http://", false), ("https://", true),
        ]
        guard let scheme = schemes.first(where: { rest.lowercased().hasPrefix($0.prefix) }) else {
            throw Invalid(description: "--url must start with ws://, wss://, http:// or https://, got '\(url)'")
        }
        rest = rest.dropFirst(scheme.prefix.count)
        secure = scheme.secure
        let defaultPort: UInt16 = secure ? 443 : 80
        let authority = rest.prefix { $0 != "/" }
        let pathPart = rest.dropFirst(authority.count)
        if !pathPart.isEmpty { path = String(pathPart) }
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portPart = after.dropFirst() }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        host = String(hostPart)
        guard !host.isEmpty else { throw Invalid(description: "--url has no host") }
        // A name: letters, digits, '-' and '.' (RFC 1123 section 2.1); an
        // IPv6 literal came in brackets.
        let isIPv6 = authority.hasPrefix("[")
        guard isIPv6 || host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }),
            host.utf8.count <= 253
        else { throw Invalid(description: "--url has a bad host '\(host)'") }
        if let portPart {
            guard let p = UInt16(portPart), p > 0 else { throw Invalid(description: "--url has a bad port '\(portPart)'") }
            port = p
        } else {
            port = defaultPort
        }
    }

    /// `host[:port]` for the Host header (RFC 9110 section 7.2): an IPv6
    /// literal in brackets, the port only when it is not the scheme's.
    var hostHeader: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }
}
