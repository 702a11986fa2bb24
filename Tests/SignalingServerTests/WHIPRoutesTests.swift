import Foundation
import NetIO
import RoomProtocol
import Rooms
import Signaling
import SignalingServer
import Testing
import Wire

/// WHIP and WHEP over real HTTP on a TCP port: status codes, headers and
/// the Location life cycle. Media workers are a stand-in endpoint (no UDP):
/// answers are built, nothing is forwarded.
@Suite(.serialized) struct WHIPRoutesTests {
    private func startServer(iceServers: (@Sendable (String) -> [ICEServer])? = nil) throws -> SignalingServer {
        let endpoint = MediaEndpoint(fingerprint: .init(algorithm: .sha256, digest: Array(0..<32))!, workers: [[]])
        return try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(media: endpoint), iceServers: iceServers)
    }

    private func token(_ identity: String, room: String = "r", publish: Bool = true, subscribe: Bool = true) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: "k", subject: identity, notBefore: now - 5, expiresAt: now + 600, room: room,
                grants: AccessTokenGrants(publish: publish, subscribe: subscribe)),
            secret: "s")
    }

    private static func fixture(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "../SDPTests/Fixtures/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// One request on a fresh connection (`Connection: close`).
    private func request(
        _ server: SignalingServer, _ method: String, _ path: String, headers: [(String, String)] = [], body: String = ""
    ) throws -> RawHTTPResponse {
        try rawHTTPRequest(server.localAddress, method, path, headers: headers, body: body)
    }

    /// RFC 9725 section 4.6: with TURN on, the 201 names each ICE server
    /// URL in a `Link` with the identity's credentials; without, none.
    @Test func whipAnswersCarryTheTURNServersAsLinkHeaders() throws {
        let server = try startServer(iceServers: { identity in
            [
                ICEServer(
                    urls: ["turn:192.0.2.1:3478?transport=udp", "turns:t.example:443?transport=tcp"], username: "9:\(identity)",
                    credential: "p\"w")
            ]
        })
        defer { server.stop() }
        let offer = try Self.fixture("aiortc-offer.sdp")
        let created = try request(
            server, "POST", "/whip/r",
            headers: [("Content-Type", "application/sdp"), ("Authorization", "Bearer \(token("alice"))")],
            body: offer)
        #expect(created.status == 201, "\(created.body)")
        #expect(
            created.links == [
                #"<turn:192.0.2.1:3478?transport=udp>; rel="ice-server"; username="9:alice"; credential="p\"w"; credential-type="password""#,
                #"<turns:t.example:443?transport=tcp>; rel="ice-server"; username="9:alice"; credential="p\"w"; credential-type="password""#,
            ])
        // The connectivity check page's endpoint: the same, as JSON, for a token.
        #expect(try request(server, "GET", "/ice-servers").status == 401)
        #expect(try request(server, "GET", "/ice-servers", headers: [("Authorization", "Bearer nope")]).status == 401)
        let servers = try request(server, "GET", "/ice-servers", headers: [("Authorization", "Bearer \(token("carol"))")])
        #expect(servers.status == 200)
        let json = try JSONSerialization.jsonObject(with: Data(servers.body.utf8)) as? [String: [[String: Any]]]
        #expect(json?["iceServers"]?.first?["username"] as? String == "9:carol", "\(servers.body)")
        let plain = try startServer()
        defer { plain.stop() }
        let without = try request(
            plain, "POST", "/whip/r",
            headers: [("Content-Type", "application/sdp"), ("Authorization", "Bearer \(token("bob"))")],
            body: offer)
        #expect(without.status == 201 && without.links.isEmpty)
        let none = try request(plain, "GET", "/ice-servers", headers: [("Authorization", "Bearer \(token("dave"))")])
        #expect(none.status == 200 && none.body == #"{"iceServers":[]}"#, "\(none.body)")
    }

    @Test func whipSessionLifeCycleOverHTTP() throws {
        let server = try startServer()
        defer { server.stop() }
        let offer = try Self.fixture("aiortc-offer.sdp")
        let auth = ("Authorization", "Bearer \(token("alice"))")
        let sdp = ("Content-Type", "application/sdp")

        let options = try request(server, "OPTIONS", "/whip/r")
        #expect(options.status == 204)
        #expect(options.headers["allow"] == "OPTIONS, POST")
        #expect(options.headers["accept-post"] == "application/sdp")

        let created = try request(server, "POST", "/whip/r", headers: [sdp, auth], body: offer)
        #expect(created.status == 201, "\(created.body)")
        #expect(created.headers["content-type"] == "application/sdp")
        let location = try #require(created.headers["location"])
        #expect(location.hasPrefix("/whip/r/SE_") && location.count == "/whip/r/SE_".count + 12)
        let etag = try #require(created.headers["etag"])
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
        #expect(created.body.hasPrefix("v=0\r\n"))
        #expect(created.body.contains("a=ice-lite"))

        let trickle = ("Content-Type", "application/trickle-ice-sdpfrag")
        let fragment =
            "a=ice-ufrag:abcd\r\na=ice-pwd:0123456789abcdefghijkl\r\na=mid:0\r\na=candidate:1 1 udp 1 192.0.2.1 9 typ host\r\n"
        #expect(try request(server, "PATCH", location, headers: [trickle], body: fragment).status == 204)
        #expect(try request(server, "PATCH", location, headers: [sdp], body: fragment).status == 415)
        #expect(try request(server, "PATCH", location, headers: [trickle, ("If-Match", "*")], body: fragment).status == 422)
        #expect(try request(server, "PATCH", "/whip/r/SE_unknown", headers: [trickle], body: fragment).status == 404)
        let sessionOptions = try request(server, "OPTIONS", location)
        #expect(sessionOptions.headers["allow"] == "OPTIONS, PATCH, DELETE")

        // The same identity again, while the session lives: 409.
        let twice = try request(server, "POST", "/whip/r", headers: [sdp, auth], body: offer)
        #expect(twice.status == 409)
        #expect(server.service.snapshot.participants == 1)

        #expect(try request(server, "DELETE", location).status == 200)
        #expect(try request(server, "DELETE", location).status == 404)
        #expect(server.service.snapshot.participants == 0)
        #expect(server.service.snapshot.rooms == 0)
    }

    @Test func refusalsCarryTheirStatusAndTheServerKeepsServing() throws {
        let server = try startServer()
        defer { server.stop() }
        let offer = try Self.fixture("aiortc-offer.sdp")
        let sdp = ("Content-Type", "application/sdp")
        let auth = ("Authorization", "Bearer \(token("alice"))")

        #expect(
            try request(server, "POST", "/whip/r", headers: [("Content-Type", "text/plain"), auth], body: offer).status == 415)
        let anonymous = try request(server, "POST", "/whip/r", headers: [sdp], body: offer)
        #expect(anonymous.status == 401)
        #expect(anonymous.headers["www-authenticate"] == "Bearer")
        #expect(
            try request(server, "POST", "/whip/r", headers: [sdp, ("Authorization", "Bearer nope")], body: offer).status == 401)
        let wrongRoom = try request(server, "POST", "/whip/other", headers: [sdp, auth], body: offer)
        #expect(wrongRoom.status == 403)
        #expect(wrongRoom.body == "token is for another room\n")
        let noGrant = ("Authorization", "Bearer \(token("eve", publish: false))")
        #expect(try request(server, "POST", "/whip/r", headers: [sdp, noGrant], body: offer).status == 403)

        let malformed = try request(server, "POST", "/whip/r", headers: [sdp, auth], body: "v=0\r\nthis is not SDP\r\n")
        #expect(malformed.status == 400)
        #expect(malformed.body.hasPrefix("malformed SDP"))
        let recvonly = try request(
            server, "POST", "/whip/r", headers: [sdp, auth], body: try Self.fixture("chromium-recvonly.sdp"))
        #expect(recvonly.status == 400)
        #expect(recvonly.body == "the offer sends no audio or video we accept\n")
        #expect(try request(server, "GET", "/healthz").status == 200)

        let get = try request(server, "GET", "/whip/r")
        #expect(get.status == 405)
        #expect(get.headers["allow"] == "OPTIONS, POST")
        #expect(try request(server, "POST", "/whip/r/a/b", headers: [sdp, auth], body: offer).status == 404)
        #expect(server.service.snapshot.participants == 0)
    }

    @Test func whepWaitsForAPublisherThenAnswers() throws {
        let server = try startServer()
        defer { server.stop() }
        let sdp = ("Content-Type", "application/sdp")
        let play = try Self.fixture("chromium-recvonly.sdp")
        let viewer = ("Authorization", "Bearer \(token("carol", publish: false))")

        let early = try request(server, "POST", "/whep/r", headers: [sdp, viewer], body: play)
        #expect(early.status == 409)
        #expect(early.headers["retry-after"] == "2")

        let published = try request(
            server, "POST", "/whip/r", headers: [sdp, ("Authorization", "Bearer \(token("alice"))")],
            body: try Self.fixture("aiortc-offer.sdp"))
        #expect(published.status == 201)
        #expect(try request(server, "POST", "/whep/r/bob", headers: [sdp, viewer], body: play).status == 409)
        let noGrant = ("Authorization", "Bearer \(token("dan", subscribe: false))")
        #expect(try request(server, "POST", "/whep/r", headers: [sdp, noGrant], body: play).status == 403)

        let playing = try request(server, "POST", "/whep/r/alice", headers: [sdp, viewer], body: play)
        #expect(playing.status == 201, "\(playing.body)")
        let location = try #require(playing.headers["location"])
        #expect(location.hasPrefix("/whep/r/SE_"))
        #expect(playing.body.contains("a=sendonly"))
        #expect(try request(server, "OPTIONS", "/whep/r").headers["accept-post"] == "application/sdp")
        // A WHEP Location is not a WHIP one.
        #expect(try request(server, "DELETE", location.replacingOccurrences(of: "/whep/", with: "/whip/")).status == 404)
        #expect(try request(server, "DELETE", location).status == 200)
        #expect(server.service.snapshot.participants == 1)
    }
}
