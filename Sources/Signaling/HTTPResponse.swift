/// An HTTP/1.1 response to serialize (RFC 9112 section 4).
///
/// The serializer owns framing: it always writes Content-Length from the
/// body (replacing any given), except for 1xx and 204 responses, which
/// must not carry one and must not have a body (RFC 9110 section 8.6). It
/// never reads a clock: pass a `Date` header value in if one is wanted.
package struct HTTPResponse: Equatable, Sendable {
    package var status: Int
    package var reason: String
    package var headers: HTTPHeaders
    package var body: [UInt8]

    /// `reason` defaults to the standard phrase of `status`.
    package init(status: Int, reason: String? = nil, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.reason = reason ?? Self.standardReason(status)
        self.headers = headers
        self.body = body
    }

    /// Whether the status forbids Content-Length and a body.
    package var hasNoContent: Bool { (100..<200).contains(status) || status == 204 }

    /// The bytes to write: status line, header fields, blank line, body.
    /// `date` (an IMF-fixdate the shell formats) is added as a Date header
    /// when given. Header names and values are written as given, minus CR
    /// and LF, so a value can never inject a header.
    /// `omittingBody`: the answer to a HEAD request, which carries the GET
    /// response's header fields, Content-Length included, and no body (RFC
    /// 9110 section 9.3.2).
    package func serialize(date: String? = nil, omittingBody: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + body.count)
        out += Array("HTTP/1.1 \(status) \(Self.clean(reason))\r\n".utf8)
        if let date { out += Array("Date: \(Self.clean(date))\r\n".utf8) }
        for field in headers.fields
        where !HTTPHeaders.namesEqual(field.name, "Content-Length") && !HTTPHeaders.namesEqual(field.name, "Date") {
            out += Array("\(Self.clean(field.name)): \(Self.clean(field.value))\r\n".utf8)
        }
        if !hasNoContent { out += Array("Content-Length: \(body.count)\r\n".utf8) }
        out += [0x0D, 0x0A]
        if !hasNoContent, !omittingBody { out += body }
        return out
    }

    private static func clean(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }))
    }

    /// Reason phrases of RFC 9110 section 15 (and RFC 6585 for 431).
    package static func standardReason(_ status: Int) -> String {
        switch status {
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 301: return "Moved Permanently"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 421: return "Misdirected Request"
        case 422: return "Unprocessable Content"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default: return "Status \(status)"
        }
    }
}
