/// The protocol version of an HTTP/1.x message (RFC 9112 section 2.3).
package struct HTTPVersion: Equatable, Hashable, Sendable, CustomStringConvertible {
    package var major: Int
    package var minor: Int
    package init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }
    package static let http1_0 = HTTPVersion(major: 1, minor: 0)
    package static let http1_1 = HTTPVersion(major: 1, minor: 1)
    package var description: String { "HTTP/\(major).\(minor)" }
}

/// One complete HTTP/1.1 request as the parser hands it out (RFC 9112
/// section 3): request line, header fields and a body whose length was given
/// by Content-Length.
package struct HTTPRequest: Equatable, Sendable {
    /// Case-sensitive (RFC 9110 section 9.1): `GET`, never `get`.
    package var method: String
    /// The request-target as sent, e.g. `/whip/room1?token=abc`.
    package var target: String
    /// The target up to the first `?`, not percent-decoded.
    package var path: String
    /// The target after the first `?`, not percent-decoded; nil without `?`.
    package var query: String?
    package var version: HTTPVersion
    package var headers: HTTPHeaders
    package var body: [UInt8]
    /// Whether the connection stays open after the response (RFC 9112
    /// section 9.3): HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with
    /// `Connection: keep-alive`.
    package var keepAlive: Bool

    package init(
        method: String, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [], keepAlive: Bool = true
    ) {
        self.method = method
        self.target = target
        if let q = target.firstIndex(of: "?") {
            path = String(target[..<q])
            query = String(target[target.index(after: q)...])
        } else {
            path = target
            query = nil
        }
        self.version = version
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
    }
}

/// Why a request was refused, each with the status code the server answers
/// before it closes the connection. After any of these the parser stops:
/// the framing of whatever follows is unknown.
package enum HTTPParseError: Error, Equatable, Sendable {
    /// Request line not `method SP target SP HTTP/x.y`, or bad characters.
    case malformedRequestLine
    /// A version other than HTTP/1.0 and HTTP/1.1 (505).
    case versionNotSupported
    /// A header line without a colon, whitespace before the colon, a
    /// non-token name, obs-fold, or a control character in the value.
    case malformedHeaderField
    /// HTTP/1.1 request with no Host, or more than one (RFC 9112 section 3.2).
    case invalidHost
    /// Content-Length not a non-negative decimal, or differing values
    /// (RFC 9110 section 8.6).
    case invalidContentLength
    /// Both Transfer-Encoding and Content-Length: a smuggling attempt
    /// (RFC 9112 section 6.3).
    case transferEncodingWithContentLength
    /// A chunked request body. We require Content-Length for request bodies
    /// (WHIP and WHEP clients send it), so the client may retry with it (411).
    case chunkedBodyNotSupported
    /// A transfer coding other than chunked (501, RFC 9112 section 6.1).
    case transferCodingNotImplemented
    /// Request line plus header section over the limit (431, RFC 6585).
    case headerSectionTooLarge
    /// Content-Length over the body limit, refused before reading the body
    /// (413, RFC 9110 section 15.5.14).
    case contentTooLarge

    /// The status code of the response to send.
    package var status: Int {
        switch self {
        case .malformedRequestLine, .malformedHeaderField, .invalidHost, .invalidContentLength,
            .transferEncodingWithContentLength:
            return 400
        case .versionNotSupported: return 505
        case .chunkedBodyNotSupported: return 411
        case .transferCodingNotImplemented: return 501
        case .headerSectionTooLarge: return 431
        case .contentTooLarge: return 413
        }
    }

    /// A sentence for logs and the response body.
    package var reason: String {
        switch self {
        case .malformedRequestLine: return "malformed request line"
        case .versionNotSupported: return "only HTTP/1.0 and HTTP/1.1 are supported"
        case .malformedHeaderField: return "malformed header field"
        case .invalidHost: return "an HTTP/1.1 request needs exactly one Host header"
        case .invalidContentLength: return "invalid Content-Length"
        case .transferEncodingWithContentLength: return "both Transfer-Encoding and Content-Length"
        case .chunkedBodyNotSupported: return "chunked request bodies are not supported: send Content-Length"
        case .transferCodingNotImplemented: return "unsupported Transfer-Encoding"
        case .headerSectionTooLarge: return "request header section too large"
        case .contentTooLarge: return "request body too large"
        }
    }

    /// The error response: status, reason as a text body, `Connection: close`.
    package var response: HTTPResponse {
        let headers = HTTPHeaders([("Content-Type", "text/plain; charset=utf-8"), ("Connection", "close")])
        return HTTPResponse(status: status, headers: headers, body: Array((reason + "\n").utf8))
    }
}
