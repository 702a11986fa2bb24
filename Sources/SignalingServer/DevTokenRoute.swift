import Foundation
import Signaling

/// Mints access tokens for the browser client in `--dev` mode, so that a
/// new user can open the page and join without a backend:
///
///     GET /dev/token?room=demo&identity=alice
///     200 {"token":"eyJ…","room":"demo","identity":"alice","expiresAt":1700003600}
///
/// Tokens grant publish and subscribe (docs/TOKENS.md). Without a
/// `DevTokenIssuer` the route does not exist (404); the pages learn which
/// mode the server is in from `GET /client-config`, which answers in
/// both. `GET /dev/token` without both parameters is 400.
///
/// Anyone who can reach the HTTP port can mint tokens: dev mode listens on
/// loopback only for that reason, and answers only to loopback `Host`
/// names and origins (`HostCheck`), so that a foreign page cannot reach it
/// through DNS rebinding.
package struct DevTokenIssuer: Sendable {
    package var key: String
    package var secret: String
    package var ttlSeconds: Int64
    /// Seconds since the Unix epoch, for `nbf` and `exp`.
    var wallClock: @Sendable () -> Int64

    package init(key: String, secret: String, ttlSeconds: Int64 = 6 * 3600) {
        self.init(key: key, secret: secret, ttlSeconds: ttlSeconds) { Int64(Date().timeIntervalSince1970) }
    }

    init(key: String, secret: String, ttlSeconds: Int64, wallClock: @escaping @Sendable () -> Int64) {
        self.key = key
        self.secret = secret
        self.ttlSeconds = ttlSeconds
        self.wallClock = wallClock
    }

    static let path = "/dev/token"
    /// What the pages ask first, in either mode: `{"devTokens": true}`
    /// when this server mints tokens, `{"devTokens": false}` otherwise.
    /// Always 200, so a page load logs no failed request in the browser's
    /// console (a probe of `/dev/token` would be a 400 or a 404).
    static let configPath = "/client-config"

    /// The answer to `GET /client-config` (nil for any other path).
    static func clientConfig(for request: HTTPRequest, devTokens: Bool) -> HTTPResponse? {
        guard request.path == configPath else { return nil }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPSessionRoutes.text(405, "method not allowed")
            response.headers.append(name: "Allow", value: "GET, HEAD")
            return response
        }
        return HTTPResponse(
            status: 200,
            headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
            body: Array(#"{"devTokens":\#(devTokens)}"#.utf8))
    }

    /// Room names and identities longer than this are refused (400).
    static let maxFieldBytes = 128

    /// nil when the path is not `/dev/token`.
    func respond(to request: HTTPRequest) -> HTTPResponse? {
        guard request.path == Self.path else { return nil }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPSessionRoutes.text(405, "method not allowed")
            response.headers.append(name: "Allow", value: "GET, HEAD")
            return response
        }
        let query = Self.queryItems(request.query ?? "")
        guard let room = query["room"] ?? nil, let identity = query["identity"] ?? nil,
            (1...Self.maxFieldBytes).contains(room.utf8.count), (1...Self.maxFieldBytes).contains(identity.utf8.count)
        else {
            return HTTPSessionRoutes.text(
                400, "dev mode: GET \(Self.path)?room=ROOM&identity=NAME (each 1 to \(Self.maxFieldBytes) bytes)")
        }
        let now = wallClock()
        let claims = AccessTokenClaims(
            issuer: key, subject: identity, notBefore: now - 5, expiresAt: now + ttlSeconds, room: room,
            grants: AccessTokenGrants(publish: true, subscribe: true))
        let body = Reply(
            token: AccessToken.mint(claims: claims, secret: secret), room: room, identity: identity,
            expiresAt: claims.expiresAt)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = (try? encoder.encode(body)).map { Array($0) } ?? []
        return HTTPResponse(
            status: 200,
            headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
            body: json)
    }

    struct Reply: Codable, Equatable {
        var token: String
        var room: String
        var identity: String
        var expiresAt: Int64
    }

    /// `application/x-www-form-urlencoded` pairs (`+` is a space, then
    /// percent-decoding); a value that does not decode is nil. Later keys
    /// win.
    static func queryItems(_ query: String) -> [String: String?] {
        var items: [String: String?] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (s: Substring) in
                HTTPSessionRoutes.percentDecoded(Substring(s.replacingOccurrences(of: "+", with: " ")))
            }
            guard let name = decode(parts[0]) else { continue }
            items[name] = parts.count == 2 ? decode(parts[1]) : ""
        }
        return items
    }
}
