import Foundation
import NetIO
import RoomProtocol
import Rooms
import Signaling
import Synchronization
import Testing
import Wire

@testable import SignalingServer

@Suite struct ServerLogTests {
    private func capture(
        _ minimum: ServerLog.Level, _ format: ServerLog.Format = .text, secrets: [String] = []
    )
        -> (ServerLog, @Sendable () -> [String])
    {
        let lines = Mutex<[String]>([])
        let log = ServerLog(minimum: minimum, format: format, secrets: secrets) { line in lines.withLock { $0.append(line) } }
        return (log, { lines.withLock { $0 } })
    }

    @Test func writesLinesAtOrAboveItsLevelWithTimestampLevelAndFields() {
        let (log, lines) = capture(.info)
        log(.debug, "hidden")
        log(.info, "joined", [("room", "r"), ("identity", "alice"), ("conn", "c1")])
        log(.error, "boom")
        let written = lines()
        #expect(written.count == 2)
        #expect(written[0].hasSuffix(" info joined room=r identity=alice conn=c1\n"), "\(written[0])")
        #expect(written[1].hasSuffix(" error boom\n"))
        // 2026-11-30T01:02:03.456Z-style UTC timestamp first.
        #expect(written[0].prefix(4).allSatisfy { $0.isNumber })
        #expect(written[0].split(separator: " ").first?.hasSuffix("Z") == true)
    }

    @Test func offWritesNothingAndDebugWritesEverything() {
        let lines = Mutex<[String]>([])
        ServerLog.off(.error, "nothing")
        let debug = ServerLog(minimum: .debug) { line in lines.withLock { $0.append(line) } }
        debug(.debug, "a")
        debug(.warning, "b")
        #expect(lines.withLock { $0.count } == 2)
        #expect(ServerLog.Level(name: "WARN") == .warning && ServerLog.Level(name: "loud") == nil)
    }

    /// A value with spaces, quotes or a newline (a room name from a token)
    /// is quoted and escaped: one event, one line, fields still parseable.
    @Test func textValuesAreQuotedWhenTheyMustBe() {
        let (log, lines) = capture(.info)
        log(.warning, "refused", [("room", "a b"), ("reason", "x=\"y\"\nfake line"), ("empty", "")])
        let line = lines()[0]
        #expect(line.hasSuffix(#" warning refused room="a b" reason="x=\"y\"\nfake line" empty=""\#n"#), "\(line)")
        #expect(line.filter { $0 == "\n" }.count == 1)
    }

    @Test func jsonIsOneEscapedObjectPerLine() throws {
        let (log, lines) = capture(.debug, .json)
        log(.info, "say \"hi\"\t", [("room", "r\u{1}\\"), ("identity", "ålice")])
        let line = lines()[0]
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["level"] == "info")
        #expect(object["msg"] == "say \"hi\"\t")
        #expect(object["room"] == "r\u{1}\\")
        #expect(object["identity"] == "ålice")
        #expect(object["time"]?.hasSuffix("Z") == true)
        #expect(line.contains(#"\u0001"#))
    }

    @Test func secretsAndTokensAreScrubbed() {
        let token = AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: "k", subject: "a", notBefore: 0, expiresAt: 10, room: "r", grants: AccessTokenGrants(publish: true)),
            secret: "the-api-secret-0123")
        let (log, lines) = capture(.debug, secrets: ["the-api-secret-0123"])
        log(.info, "got \(token) here", [("secret", "x the-api-secret-0123 y"), ("ok", "eyJ-not-a-token")])
        let line = lines()[0]
        #expect(!line.contains(token) && !line.contains("the-api-secret-0123"), "\(line)")
        #expect(line.contains("got <redacted token> here"))
        #expect(line.contains("<redacted>"))
        #expect(line.contains("ok=eyJ-not-a-token"))
    }

    /// A known token, API secret and ICE password through the join, WHIP
    /// and refusal paths at debug level: none of them is ever written, and
    /// the lines carry level, room, identity, participant and remote address.
    @Test func joinWHIPAndRefusalsNeverLogATokenOrSecret() throws {
        let secret = "known-api-secret-0123456789"
        // No `secrets:` given: the paths themselves must not log them.
        let (log, lines) = capture(.debug)
        let endpoint = MediaEndpoint(fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[]])
        let service = RoomService(
            verifier: AccessTokenVerifier(keys: ["k": secret]),
            configuration: RoomDirectory<RandomIdentifiers>.Configuration(media: endpoint), media: { _ in }, log: log)
        let now = Int64(Date().timeIntervalSince1970)
        func token(_ identity: String, secret: String = secret, room: String = "r") -> String {
            AccessToken.mint(
                claims: AccessTokenClaims(
                    issuer: "k", subject: identity, notBefore: now - 5, expiresAt: now + 600, room: room,
                    grants: AccessTokenGrants(publish: true, subscribe: true)),
                secret: secret)
        }
        let good = token("alice"), forged = token("mallory", secret: "wrong-secret-0123456789")
        let remote = SocketAddress(ip: "127.0.0.1", port: 40001)!
        let c1 = ConnectionID(1), c2 = ConnectionID(2)
        service.opened(c1, remote: remote)
        service.received(text: #"{"type":"join","token":"\#(good)"}"#, on: c1, now: .zero)
        service.opened(c2, remote: SocketAddress(ip: "127.0.0.1", port: 40002)!)
        service.received(text: #"{"type":"join","token":"\#(forged)"}"#, on: c2, now: .zero)
        service.received(text: #"{"type":"join","token":"\#(good)x"}"#, on: c2, now: .zero)
        service.received(text: #"{"type":"join","token":7,"secret":"\#(secret)"}"#, on: c2, now: .zero)
        service.received(text: #"{"type":"leave"}"#, on: c1, now: .zero)
        service.closed(c1, now: .zero)

        let offer = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(
                path: "../SDPTests/Fixtures/aiortc-offer.sdp"), encoding: .utf8)
        let routes = HTTPSessionRoutes(service: service, remote: SocketAddress(ip: "127.0.0.1", port: 40003)!)
        func post(_ token: String) -> HTTPResponse? {
            routes.respond(
                to: HTTPRequest(
                    method: "POST", target: "/whip/r",
                    headers: HTTPHeaders([("Content-Type", "application/sdp"), ("Authorization", "Bearer \(token)")]),
                    body: Array(offer.utf8)), now: .zero)
        }
        let created = try #require(post(token("bob")))
        #expect(created.status == 201)
        #expect(post(forged)?.status == 401)
        #expect(post(token("carol", room: "elsewhere"))?.status == 403)
        let location = try #require(created.headers["Location"])
        #expect(routes.respond(to: HTTPRequest(method: "DELETE", target: location), now: .zero)?.status == 200)
        #expect(routes.respond(to: HTTPRequest(method: "DELETE", target: location), now: .zero)?.status == 404)

        let answer = String(decoding: created.body, as: UTF8.self)
        let icePassword = try #require(
            answer.split(separator: "\r\n").first { $0.hasPrefix("a=ice-pwd:") }?.dropFirst("a=ice-pwd:".count))
        let session = try #require(location.split(separator: "/").last)
        let text = lines().joined()
        for needle in [good, forged, secret, String(icePassword), String(session)] {
            #expect(!text.contains(needle), "logged: \(needle.prefix(12))…\n\(text)")
        }
        let all = lines()
        func line(_ fragment: String) -> String? { all.first { $0.contains(fragment) } }
        let joined = try #require(line(" info joined "))
        #expect(joined.contains("room=r") && joined.contains("identity=alice") && joined.contains("participant=PA_"))
        #expect(joined.contains("conn=c1") && joined.contains("remote=127.0.0.1:40001"))
        let badToken = try #require(line("join refused: bad token"))
        #expect(badToken.contains(" warning ") && badToken.contains("reason=\"bad token signature\""))
        #expect(badToken.contains("remote=127.0.0.1:40002"))
        #expect(line(" warning message refused") != nil)
        let left = try #require(line(" info left "))
        #expect(left.contains("identity=alice"))
        let whip = try #require(line("WHIP session created"))
        #expect(whip.contains("identity=bob") && whip.contains("remote=127.0.0.1:40003"))
        #expect(line("WHIP session ended by DELETE")?.contains("identity=bob") == true)
        #expect(all.contains { $0.contains(" warning WHIP request refused") && $0.contains("status=401") })
        #expect(all.contains { $0.contains(" warning WHIP request refused") && $0.contains("status=403") })
        #expect(all.contains { $0.contains(" warning WHIP request refused") && $0.contains("status=404") })
    }

    /// Every client that leaves closes its transport (DTLS close_notify):
    /// that is info, only a failure is a warning (Scripts/soak counts
    /// warnings; churn made one per departing bot before).
    @Test func aTransportThePeerClosedIsInfoAndAFailureAWarning() {
        let (log, lines) = capture(.debug)
        let endpoint = MediaEndpoint(fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[]])
        let service = RoomService(
            verifier: AccessTokenVerifier(keys: ["k": "secret-0123456789abcdef"]),
            configuration: RoomDirectory<RandomIdentifiers>.Configuration(media: endpoint), media: { _ in }, log: log)
        service.transportFailed(ParticipantID("PA_closed"), failed: false, now: .zero)
        service.transportFailed(ParticipantID("PA_failed"), now: .zero)
        let all = lines()
        #expect(all.contains { $0.contains(" info media transport closed by the peer") && $0.contains("PA_closed") })
        #expect(all.contains { $0.contains(" warning media transport failed") && $0.contains("PA_failed") })
        #expect(!all.contains { $0.contains(" warning ") && $0.contains("PA_closed") })
    }
}
