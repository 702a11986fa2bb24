import Foundation
import NetIO
import Rooms
import Signaling
import SignalingServer
import Testing

/// The browser client's files and the dev-token route over real HTTP on a
/// TCP port, as a client sees them (docs/WEB_CLIENT.md).
@Suite(.serialized) struct WebClientRoutesTests {
    private func startServer(dev: Bool = false) throws -> SignalingServer {
        try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(),
            devTokens: dev ? DevTokenIssuer(key: "k", secret: "s", ttlSeconds: 600) : nil)
    }

    struct Response {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    /// Splits what came back into responses; a HEAD response has no body
    /// whatever its Content-Length says (RFC 9110 section 9.3.2).
    private func responses(_ raw: String, heads: [Bool]) -> [Response] {
        var rest = Substring(raw)
        var out: [Response] = []
        for isHead in heads {
            guard let end = rest.range(of: "\r\n\r\n") else { break }
            let head = rest[..<end.lowerBound].components(separatedBy: "\r\n")
            rest = rest[end.upperBound...]
            var fields: [String: String] = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = isHead ? 0 : Int(fields["content-length"] ?? "0") ?? 0
            let body = String(rest.utf8.prefix(length)) ?? ""
            rest = rest.dropFirst(body.count)
            let status = Int(head[0].split(separator: " ").dropFirst().first ?? "") ?? 0
            out.append(Response(status: status, headers: fields, body: body))
        }
        return out
    }

    private func request(
        _ server: SignalingServer, _ method: String, _ target: String, headers: [(String, String)] = []
    ) throws -> Response {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        let raw = try rawTCPExchange(server, sending: text + "\r\n").response
        return try #require(responses(raw, heads: [method == "HEAD"]).first, "no response to \(method) \(target): \(raw)")
    }

    @Test func servesEachFileWithItsContentTypeAndNoCache() throws {
        let server = try startServer()
        defer { server.stop() }
        let expected = [
            "/": "text/html; charset=utf-8", "/call": "text/html; charset=utf-8", "/style.css": "text/css; charset=utf-8",
            "/swiftlet-client.js": "text/javascript; charset=utf-8", "/tiles.js": "text/javascript; charset=utf-8",
            "/room.js": "text/javascript; charset=utf-8", "/call.js": "text/javascript; charset=utf-8",
            "/favicon.svg": "image/svg+xml",
        ]
        for (path, type) in expected {
            let r = try request(server, "GET", path)
            #expect(r.status == 200, "\(path)")
            #expect(r.headers["content-type"] == type, "\(path)")
            #expect(r.headers["cache-control"] == "no-cache", "\(path)")
            #expect(r.headers["x-content-type-options"] == "nosniff", "\(path)")
            #expect(r.headers["etag"]?.count == 18, "\(path): a quoted 16-digit tag")
            #expect(Int(r.headers["content-length"] ?? "") == r.body.utf8.count && !r.body.isEmpty, "\(path)")
        }
        let room = try request(server, "GET", "/?room=demo&name=alice")
        #expect(room.body.contains("<script type=\"module\" src=\"/room.js\"></script>"))
        #expect(try request(server, "GET", "/call").body.contains("src=\"/call.js\""))
    }

    @Test func everyFileThePagesReferenceIsServed() throws {
        let server = try startServer()
        defer { server.stop() }
        var referenced: Set<String> = []
        for page in ["/", "/call", "/room.js", "/call.js", "/tiles.js"] {
            let body = try request(server, "GET", page).body
            // src="/x", href="/x", and module imports from '/x'.
            for pattern in [#"(?:src|href)="(/[^"]*)""#, #"from '(/[^']*)'"#] {
                let regex = try NSRegularExpression(pattern: pattern)
                for match in regex.matches(in: body, range: NSRange(body.startIndex..., in: body)) {
                    if let range = Range(match.range(at: 1), in: body) { referenced.insert(String(body[range])) }
                }
            }
        }
        #expect(
            referenced.isSuperset(of: [
                "/", "/call", "/style.css", "/room.js", "/call.js", "/tiles.js", "/swiftlet-client.js", "/favicon.svg",
            ]))
        for path in referenced.sorted() {
            #expect(try request(server, "GET", path).status == 200, "\(path)")
        }
    }

    @Test func headHasTheHeadersOfGetAndNoBodySoKeepAliveFramingHolds() throws {
        let server = try startServer()
        defer { server.stop() }
        let get = try request(server, "GET", "/style.css")
        // HEAD then GET on one connection: the GET must parse right after
        // the HEAD's header section.
        let raw = try rawTCPExchange(
            server,
            sending: "HEAD /style.css HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        ).response
        let both = responses(raw, heads: [true, false])
        try #require(both.count == 2, "\(raw)")
        #expect(both[0].status == 200)
        #expect(both[0].headers["content-type"] == "text/css; charset=utf-8")
        #expect(both[0].headers["etag"] == get.headers["etag"])
        #expect(both[0].headers["content-length"] == String(get.body.utf8.count))
        #expect(both[1].status == 200)
        #expect(both[1].body == "ok\n")
        #expect(raw.hasSuffix("\r\n\r\nok\n"), "nothing of style.css in between: \(raw)")
    }

    @Test func matchingIfNoneMatchIsNotModified() throws {
        let server = try startServer()
        defer { server.stop() }
        let etag = try #require(try request(server, "GET", "/room.js").headers["etag"])
        let again = try request(server, "GET", "/room.js", headers: [("If-None-Match", "\"other\", \(etag)")])
        #expect(again.status == 304)
        #expect(again.headers["etag"] == etag)
        #expect(again.body == "")
        #expect(try request(server, "GET", "/room.js", headers: [("If-None-Match", "\"other\"")]).status == 200)
    }

    @Test func unknownPathsAndTraversalAttemptsAreNotFound() throws {
        let server = try startServer()
        defer { server.stop() }
        let attempts = [
            "/../Package.swift", "/%2e%2e/", "/%2e%2e/Package.swift", "/%2E%2E%2FPackage.swift", "/room.js/../../Package.swift",
            "/Web/index.html", "/index.html", "/style.css/", "/STYLE.CSS", "/room.js%00", "//etc/passwd", "/nope",
            "/..%2f..%2fetc%2fpasswd", "/call/", "/dev/token",
        ]
        for target in attempts {
            let r = try request(server, "GET", target)
            #expect(r.status == 404, "\(target)")
            #expect(r.body == "not found\n", "\(target)")
        }
    }

    @Test func otherMethodsOnAFileAreNotAllowed() throws {
        let server = try startServer()
        defer { server.stop() }
        let r = try request(server, "DELETE", "/")
        #expect(r.status == 405)
        #expect(r.headers["allow"] == "GET, HEAD")
    }

    /// The pages learn the mode from a route that answers 200 in both, so a
    /// page load logs no failed request in the browser's console.
    @Test func clientConfigSaysWhetherTheServerMintsDevTokens() throws {
        for dev in [false, true] {
            let server = try startServer(dev: dev)
            defer { server.stop() }
            let r = try request(server, "GET", "/client-config")
            #expect(r.status == 200)
            #expect(r.headers["content-type"] == "application/json")
            #expect(r.headers["cache-control"] == "no-store")
            struct Config: Decodable { var devTokens: Bool }
            #expect(try JSONDecoder().decode(Config.self, from: Data(r.body.utf8)).devTokens == dev, "\(r.body)")
            #expect(try request(server, "HEAD", "/client-config").status == 200)
            #expect(try request(server, "POST", "/client-config").status == 405)
        }
    }

    @Test func devTokenRouteIsAbsentWithoutDevMode() throws {
        let server = try startServer()
        defer { server.stop() }
        #expect(try request(server, "GET", "/dev/token?room=demo&identity=alice").status == 404)
    }

    @Test func devTokenMintsATokenTheServerAccepts() throws {
        let server = try startServer(dev: true)
        defer { server.stop() }
        let r = try request(server, "GET", "/dev/token?room=my%20room&identity=al+ice")
        #expect(r.status == 200)
        #expect(r.headers["content-type"] == "application/json")
        #expect(r.headers["cache-control"] == "no-store")
        struct Reply: Decodable {
            var token: String
            var room: String
            var identity: String
            var expiresAt: Int64
        }
        let reply = try JSONDecoder().decode(Reply.self, from: Data(r.body.utf8))
        #expect(reply.room == "my room")
        #expect(reply.identity == "al ice")
        let now = Int64(Date().timeIntervalSince1970)
        let claims = try AccessTokenVerifier(keys: ["k": "s"]).verify(
            reply.token, room: "my room", required: nil, nowSeconds: now)
        #expect(claims.subject == "al ice")
        #expect(claims.issuer == "k")
        #expect(claims.grants == AccessTokenGrants(publish: true, subscribe: true))
        #expect(claims.expiresAt == reply.expiresAt)
        #expect((now + 590...now + 610).contains(claims.expiresAt))
    }

    @Test func devTokenWithoutRoomOrIdentityIsABadRequest() throws {
        let server = try startServer(dev: true)
        defer { server.stop() }
        for target in [
            "/dev/token", "/dev/token?room=demo", "/dev/token?identity=a", "/dev/token?room=&identity=a",
            "/dev/token?room=%zz&identity=a", "/dev/token?room=r&identity=" + String(repeating: "x", count: 129),
        ] {
            #expect(try request(server, "GET", target).status == 400, "\(target)")
        }
        #expect(try request(server, "POST", "/dev/token?room=r&identity=a").status == 405)
    }
}
