import Wire

/// Why a server's response head was refused.
package enum HTTPResponseParseError: Error, Equatable, Sendable {
    /// The head is longer than the limit without its blank line.
    case headTooLong
    /// The status line is not `HTTP/1.x NNN reason`.
    case malformedStatusLine
    /// A header line without a colon, with a bad name, or with CR/LF or
    /// other control characters in its value.
    case malformedHeaderField
}

/// The status line and header fields of an HTTP/1.1 response (RFC 9112
/// sections 4 and 5), read by a client: the WebSocket handshake answer
/// (RFC 6455 section 4.2.2), or a WHIP/WHEP server's reply.
package struct HTTPResponseHead: Equatable, Sendable {
    package var version: HTTPVersion
    package var status: Int
    package var reason: String
    package var headers: HTTPHeaders

    package init(version: HTTPVersion = .http1_1, status: Int, reason: String, headers: HTTPHeaders) {
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// The head at the start of `bytes` and its length including the blank
    /// line; nil while the blank line has not arrived. Bytes after the head
    /// (a body, or WebSocket frames after a 101) are the caller's.
    /// `maxLength` bounds what is searched, so a server that never ends its
    /// head cannot make the client buffer without limit.
    package static func parse(
        _ bytes: RawSpan, maxLength: Int = 16 * 1024
    ) throws(HTTPResponseParseError) -> (head: HTTPResponseHead, length: Int)? {
        let count = bytes.byteCount
        var end: Int?
        var i = 0
        while i + 3 < count {
            if bytes.byte(at: i) == 0x0D, bytes.byte(at: i + 1) == 0x0A, bytes.byte(at: i + 2) == 0x0D,
                bytes.byte(at: i + 3) == 0x0A
            {
                end = i
                break
            }
            i += 1
        }
        guard let end else {
            if count > maxLength { throw .headTooLong }
            return nil
        }
        guard end + 4 <= maxLength else { throw .headTooLong }
        var text: [UInt8] = []
        text.reserveCapacity(end)
        for j in 0..<end { text.append(bytes.byte(at: j)) }
        let lines = text.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        guard let statusLine = lines.first else { throw .malformedStatusLine }
        let (version, status, reason) = try parseStatusLine(statusLine)
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .malformedHeaderField }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenCharacter) else { throw .malformedHeaderField }
            let value = line[(colon + 1)...]
            guard value.allSatisfy({ HTTPSyntax.isFieldValueCharacter($0) || HTTPSyntax.isWhitespace($0) }) else {
                throw .malformedHeaderField
            }
            headers.append(name: HTTPSyntax.latin1(name), value: HTTPSyntax.trimmed(Substring(HTTPSyntax.latin1(value))))
        }
        return (HTTPResponseHead(version: version, status: status, reason: reason, headers: headers), end + 4)
    }

    /// `HTTP/1.1 101 Switching Protocols`: version, three digits, a space
    /// and an optional reason (RFC 9112 section 4).
    static func parseStatusLine(
        _ line: ArraySlice<UInt8>
    ) throws(HTTPResponseParseError) -> (HTTPVersion, Int, String) {
        let prefix = Array("HTTP/1.".utf8)
        guard line.count >= 12, Array(line.prefix(7)) == prefix else { throw .malformedStatusLine }
        let s = line.startIndex
        let version: HTTPVersion
        switch line[s + 7] {
        case UInt8(ascii: "1"): version = .http1_1
        case UInt8(ascii: "0"): version = .http1_0
        default: throw .malformedStatusLine
        }
        guard line[s + 8] == 0x20 else { throw .malformedStatusLine }
        var status = 0
        for k in 9..<12 {
            let c = line[s + k]
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { throw .malformedStatusLine }
            status = status * 10 + Int(c - UInt8(ascii: "0"))
        }
        guard status >= 100 else { throw .malformedStatusLine }
        if line.count == 12 { return (version, status, "") }
        guard line[s + 12] == 0x20 else { throw .malformedStatusLine }
        let reason = line[(s + 13)...]
        guard reason.allSatisfy({ HTTPSyntax.isFieldValueCharacter($0) || HTTPSyntax.isWhitespace($0) }) else {
            throw .malformedStatusLine
        }
        return (version, status, HTTPSyntax.latin1(reason))
    }
}
