import Foundation
import NetIO
import RoomProtocol
import Rooms
import Signaling
import SignalingServer
import Testing
import Wire

/// The server API (docs/API.md) over real HTTP on loopback: every call
/// with a good token, a wrong-room one, a non-admin one and an expired
/// one; room options enforced; removal and metadata reach participants.
@Suite(.serialized) struct ServerAPITests {
    private func startServer(limits: RoomLimits = RoomLimits()) throws -> SignalingServer {
        var rooms = RoomDirectory<RandomIdentifiers>.Configuration()
        rooms.limits = limits
        // Each call is a connection of its own: more than the default
        // per-address rate.
        var connections = SignalingConnectionLimits()
        connections.ratePerSecond = 1000
        connections.burst = 1000
        return try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]), rooms: rooms,
            connectionLimits: connections)
    }

    private func token(
        _ identity: String = "backend", room: String = "*", admin: Bool = true, expiresIn: Int64 = 600
    ) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: "k", subject: identity, notBefore: now - 700, expiresAt: now + expiresIn, room: room,
                grants: AccessTokenGrants(publish: true, subscribe: true, admin: admin)),
            secret: "s")
    }

    private func call(
        _ server: SignalingServer, _ method: String, _ path: String, token: String?, json: String? = nil
    ) throws -> RawHTTPResponse {
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if json != nil { headers.append(("Content-Type", "application/json")) }
        return try rawHTTPRequest(server.localAddress, method, path, headers: headers, body: json ?? "")
    }

    private func object(_ response: RawHTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body.utf8))) as? [String: Any] ?? [:]
    }

    /// Joins `identity` to `room` over the room WebSocket and reads `joined`.
    private func join(_ server: SignalingServer, _ identity: String, room: String) throws -> (BlockingWebSocket, String?) {
        let ws = try BlockingWebSocket(server)
        ws.send(#"{"type":"join","token":"\#(token(identity, room: room, admin: false))"}"#)
        return (ws, ws.nextText())
    }

    @Test func everyCallChecksTheTokenRoomAndAdminGrant() throws {
        let server = try startServer()
        defer { server.stop() }
        let (alice, joined) = try join(server, "alice", room: "r")
        #expect(joined?.contains(#""type":"joined""#) == true)
        _ = alice
        // (method, path, body) of every call on room "r" (participant alice).
        let calls: [(String, String, String?)] = [
            ("GET", "/api/v1/rooms/r", nil),
            ("PATCH", "/api/v1/rooms/r", #"{"metadata":"m"}"#),
            ("GET", "/api/v1/rooms/r/participants", nil),
            ("GET", "/api/v1/rooms/r/participants/alice", nil),
            ("PATCH", "/api/v1/rooms/r/participants/alice", #"{"metadata":"x"}"#),
            ("POST", "/api/v1/rooms/r/participants/alice/tracks/TR_none/mute", #"{"muted":true}"#),
            ("POST", "/api/v1/rooms/r/data", #"{"data":"aGk="}"#),
            ("POST", "/api/v1/rooms/r/recording", nil),
            ("DELETE", "/api/v1/rooms/r/recording", nil),
            ("POST", "/api/v1/rooms", #"{"name":"r"}"#),
            ("DELETE", "/api/v1/rooms/r/participants/alice", nil),
            ("DELETE", "/api/v1/rooms/r", nil),
        ]
        for (method, path, body) in calls {
            let label = "\(method) \(path)"
            #expect(try call(server, method, path, token: nil, json: body).status == 401, "\(label)")
            let expired = try call(server, method, path, token: token(expiresIn: -1), json: body)
            #expect(expired.status == 401 && object(expired)["code"] as? String == "unauthorized", "\(label)")
            let notAdmin = try call(server, method, path, token: token(admin: false), json: body)
            #expect(notAdmin.status == 403 && object(notAdmin)["code"] as? String == "forbidden", "\(label)")
            let wrongRoom = try call(server, method, path, token: token(room: "other"), json: body)
            #expect(wrongRoom.status == 403, "\(label) \(wrongRoom.body)")
        }
        // Nothing the refused calls did changed the room.
        let room = try call(server, "GET", "/api/v1/rooms/r", token: token(room: "r"))
        #expect(room.status == 200 && object(room)["participants"] as? Int == 1, "\(room.body)")

        // The same calls with good tokens, room-scoped and all-rooms.
        let good = token(room: "r")
        #expect(
            object(try call(server, "PATCH", "/api/v1/rooms/r", token: good, json: #"{"metadata":"m"}"#))["metadata"] as? String
                == "m")
        let list = try call(server, "GET", "/api/v1/rooms/r/participants", token: good)
        let first = (object(list)["participants"] as? [[String: Any]])?.first
        #expect(first?["identity"] as? String == "alice" && first?["kind"] as? String == "websocket", "\(list.body)")
        #expect(try call(server, "GET", "/api/v1/rooms/r/participants/alice", token: good).status == 200)
        #expect(try call(server, "GET", "/api/v1/rooms/r/participants/zed", token: good).status == 404)
        let updated = try call(server, "PATCH", "/api/v1/rooms/r/participants/alice", token: good, json: #"{"metadata":"x"}"#)
        #expect(object(updated)["metadata"] as? String == "x", "\(updated.body)")
        #expect(alice.nextText()?.contains(#""type":"participant-updated""#) == true)
        let mute = try call(
            server, "POST", "/api/v1/rooms/r/participants/alice/tracks/TR_none/mute", token: good, json: #"{"muted":true}"#)
        #expect(mute.status == 404 && object(mute)["code"] as? String == "unknown_track", "\(mute.body)")
        // alice joined over the WebSocket only: no data channel, so the
        // message reaches nobody (aiortc's data channel test sees one
        // arrive); a body that is neither text nor binary is refused.
        let data = try call(server, "POST", "/api/v1/rooms/r/data", token: good, json: #"{"data":"hi"}"#)
        #expect(data.status == 200 && object(data)["sent"] as? Int == 0, "\(data.body)")
        #expect(try call(server, "POST", "/api/v1/rooms/r/data", token: good, json: "{}").status == 400)
        #expect(try call(server, "POST", "/api/v1/rooms/r/data", token: good, json: #"{"base64":"%%"}"#).status == 400)
        let tooBig = try call(
            server, "POST", "/api/v1/rooms/r/data", token: good, json: "{\"data\":\"\(String(repeating: "x", count: 17000))\"}")
        #expect(tooBig.status == 413 || object(tooBig)["code"] as? String == "too_large", "\(tooBig.status)")
        #expect(try call(server, "POST", "/api/v1/rooms/nowhere/data", token: token(), json: #"{"data":"hi"}"#).status == 404)
        // This server records nothing (no --record-dir): the recording
        // calls say so (the recorder's own test drives them for real).
        for method in ["POST", "DELETE"] {
            let recording = try call(server, method, "/api/v1/rooms/r/recording", token: good)
            #expect(
                recording.status == 501 && object(recording)["code"] as? String == "recording_unavailable", "\(recording.body)")
        }
        let exists = try call(server, "POST", "/api/v1/rooms", token: good, json: #"{"name":"r"}"#)
        #expect(exists.status == 409 && object(exists)["code"] as? String == "room_exists", "\(exists.body)")
        #expect(try call(server, "POST", "/api/v1/rooms", token: good, json: "{nope").status == 400)
        let big = try call(
            server, "POST", "/api/v1/rooms", token: good, json: "{\"name\":\"" + String(repeating: "a", count: 20_000) + "\"}")
        #expect(big.status == 413)
        // A room-scoped token lists its own room only; "*" lists all.
        _ = try call(server, "POST", "/api/v1/rooms", token: token(), json: #"{"name":"s","emptyTimeout":60}"#)
        let scoped = try call(server, "GET", "/api/v1/rooms", token: good)
        #expect((object(scoped)["rooms"] as? [[String: Any]])?.map { $0["name"] as? String } == ["r"], "\(scoped.body)")
        let all = try call(server, "GET", "/api/v1/rooms", token: token())
        #expect((object(all)["rooms"] as? [[String: Any]])?.count == 2, "\(all.body)")
        // Removal: alice hears `removed` and her connection closes.
        let removed = try call(server, "DELETE", "/api/v1/rooms/r/participants/alice", token: good)
        #expect(removed.status == 200, "\(removed.body)")
        #expect(alice.nextText()?.contains(#""code":"removed""#) == true)
        #expect(alice.nextText() == nil)
        // The room emptied and had no timeout of its own: gone.
        #expect(try call(server, "GET", "/api/v1/rooms/r", token: good).status == 404)
        #expect(try call(server, "DELETE", "/api/v1/rooms/s", token: token()).status == 200)
        #expect(try call(server, "DELETE", "/api/v1/rooms/s", token: token()).status == 404)
    }

    @Test func roomOptionsAreEnforced() throws {
        let server = try startServer()
        defer { server.stop() }
        let admin = token()
        let created = try call(
            server, "POST", "/api/v1/rooms", token: admin,
            json: #"{"name":"small","mode":"sfu","maxParticipants":1,"emptyTimeout":0.3,"metadata":"{\"topic\":\"x\"}"}"#)
        #expect(created.status == 201, "\(created.body)")
        #expect(object(created)["maxParticipants"] as? Int == 1 && object(created)["metadata"] as? String == #"{"topic":"x"}"#)
        let bad = try call(server, "POST", "/api/v1/rooms", token: admin, json: #"{"name":"b","maxParticipants":0}"#)
        #expect(bad.status == 400 && object(bad)["code"] as? String == "bad_request")
        let (first, joined) = try join(server, "a", room: "small")
        #expect(joined?.contains(#""type":"joined""#) == true)
        let (_, refused) = try join(server, "b", room: "small")
        #expect(refused?.contains(#""code":"room_full""#) == true, "\(refused ?? "-")")
        first.send(#"{"type":"leave"}"#)
        // Empty again: it stays for its 0.3 s timeout, then closes.
        let deadline = Date().addingTimeInterval(3)
        var sawEmpty = false
        var status = 200
        while Date() < deadline {
            let room = try call(server, "GET", "/api/v1/rooms/small", token: admin)
            status = room.status
            if status == 200, object(room)["participants"] as? Int == 0 { sawEmpty = true }
            if status == 404 { break }
            usleep(50_000)
        }
        #expect(sawEmpty && status == 404)
    }
}
