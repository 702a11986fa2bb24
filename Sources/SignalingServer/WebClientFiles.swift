import CryptoPrimitives
import Signaling

/// The browser client (docs/WEB_CLIENT.md): a fixed table of files compiled
/// into the binary from `Web/` (SwiftPM `embedInCode`), built once at
/// startup. A request is answered only when its path is a key of the
/// table; no filesystem path is ever built from a request, so `..`,
/// percent-encoded dots and absolute paths all fall through to 404.
///
/// Every file is served with its Content-Type, `Cache-Control: no-cache`
/// (revalidate every time, so a new build is picked up at once) and a
/// strong ETag (RFC 9110 section 8.8.3) from its SHA-256; `If-None-Match`
/// with a matching tag answers 304 (RFC 9110 section 13.1.2).
struct WebClientFiles: Sendable {
    struct File: Equatable, Sendable {
        var contentType: String
        var body: [UInt8]
        var etag: String
    }

    /// Request path -> file.
    let files: [String: File]

    init(_ files: [String: (contentType: String, body: [UInt8])]) {
        self.files = files.mapValues { File(contentType: $0.contentType, body: $0.body, etag: Self.etag(of: $0.body)) }
    }

    /// The client of `Web/`: `/` is the room page, `/call` the one-to-one
    /// call page.
    static let standard = WebClientFiles([
        "/": ("text/html; charset=utf-8", PackageResources.index_html),
        "/call": ("text/html; charset=utf-8", PackageResources.call_html),
        "/style.css": ("text/css; charset=utf-8", PackageResources.style_css),
        "/swiftlet-client.js": ("text/javascript; charset=utf-8", PackageResources.swiftlet_client_js),
        "/tiles.js": ("text/javascript; charset=utf-8", PackageResources.tiles_js),
        "/room.js": ("text/javascript; charset=utf-8", PackageResources.room_js),
        "/call.js": ("text/javascript; charset=utf-8", PackageResources.call_js),
        // The connectivity check: which transports reach this server.
        "/check": ("text/html; charset=utf-8", PackageResources.check_html),
        "/check.js": ("text/javascript; charset=utf-8", PackageResources.check_js),
        // Linked from both pages (`<link rel="icon">`), so the browser asks
        // for nothing else and logs no 404 for /favicon.ico.
        "/favicon.svg": ("image/svg+xml", PackageResources.favicon_svg),
    ])

    /// nil when `request.path` is not one of the files. GET and HEAD are
    /// answered; other methods get 405.
    func respond(to request: HTTPRequest) -> HTTPResponse? {
        guard let file = files[request.path] else { return nil }
        guard request.method == "GET" || request.method == "HEAD" else {
            return HTTPResponse(
                status: 405, headers: HTTPHeaders([("Allow", "GET, HEAD"), ("Content-Type", "text/plain; charset=utf-8")]),
                body: Array("method not allowed\n".utf8))
        }
        var headers = HTTPHeaders([
            ("Content-Type", file.contentType), ("Cache-Control", "no-cache"), ("ETag", file.etag),
            ("X-Content-Type-Options", "nosniff"),
        ])
        if Self.matches(request.headers["If-None-Match"], file.etag) {
            headers.remove(name: "Content-Type")
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: headers, body: file.body)
    }

    /// `If-None-Match: *` or a list containing the tag (weak comparison,
    /// RFC 9110 section 13.1.2).
    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        for candidate in ifNoneMatch.split(separator: ",") {
            var tag = candidate.trimmingSpaces
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == etag { return true }
        }
        return false
    }

    /// A quoted strong entity tag: the first 16 hex digits of the SHA-256.
    static func etag(of body: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for b in Digest.sha256(body).prefix(8) {
            out += [digits[Int(b >> 4)], digits[Int(b & 0xF)]]
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}
