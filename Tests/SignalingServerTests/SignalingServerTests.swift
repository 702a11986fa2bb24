import Foundation
import NetIO
import RoomProtocol
import Rooms
import Signaling
import SignalingServer
import Testing
import Wire

/// The signalling server on a real TCP port: plain HTTP endpoints from a
/// raw socket, and the room protocol driven by Python's `websockets`.
@Suite(.serialized) struct SignalingServerTests {
    static let keys = ["testkey": "testsecret"]

    private func startServer() throws -> SignalingServer {
        try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: Self.keys),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration())
    }

    private func token(_ identity: String, room: String) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return AccessToken.mint(
            claims: AccessTokenClaims(
                issuer: "testkey", subject: identity, notBefore: now - 5, expiresAt: now + 600, room: room,
                grants: AccessTokenGrants(publish: true, subscribe: true)),
            secret: "testsecret")
    }

    /// One HTTP/1.1 request on a fresh connection; the raw response.
    private func request(_ server: SignalingServer, _ text: String) throws -> String {
        try rawTCPExchange(server, sending: text).response
    }

    @Test func servesHealthReadinessAndMetrics() throws {
        let server = try startServer()
        defer { server.stop() }
        #expect(try request(server, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(try request(server, "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        let metrics = try request(server, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(metrics.contains("swiftlet_rooms 0"))
        #expect(metrics.contains("\nswiftlet_draining 0\n"))
        #expect(metrics.contains("# TYPE swiftlet_participants gauge"))
        #expect(try request(server, "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 404"))
        #expect(try request(server, "GARBAGE\r\n\r\n").hasPrefix("HTTP/1.1 400"))
        let big = "GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 17 * 1024) + "\r\n\r\n"
        #expect(try request(server, big).hasPrefix("HTTP/1.1 431"))
        // Two keep-alive requests on one connection.
        let two = try request(
            server, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(two.components(separatedBy: "HTTP/1.1 200").count == 3)
        // HEAD /metrics: the GET's headers and Content-Length, no body.
        let head = try request(server, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let getBody = metrics.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 200"))
        #expect(head.contains("Content-Length: \(getBody.utf8.count)\r\n"))
        #expect(head.hasSuffix("\r\n\r\n"))
        #expect(!head.contains("swiftlet_rooms"))
    }

    /// SIGTERM's drain as a client sees it: HTTP goes on, new sessions get
    /// 503 with Retry-After, a joined participant hears `going-away` with
    /// the deadline and, at the end, a close frame with 1001.
    @Test func drainingKeepsServingHTTPAndRefusesNewSessions() throws {
        let server = try startServer()
        defer { server.stop() }
        let alice = try BlockingWebSocket(server)
        try #require(alice.refusal == nil)
        alice.send(#"{"type":"join","token":"\#(token("alice", room: "r"))"}"#)
        #expect(alice.nextText()?.contains(#""type":"joined""#) == true)

        server.drain(until: MonotonicClock.now() + .seconds(30), deadlineEpochMilliseconds: 1_900_000_000_000)
        let notice = try #require(alice.nextText())
        let message = try ServerMessage(json: notice)
        guard case .goingAway(_, let deadline, let seconds) = message else {
            Issue.record("expected going-away, got \(notice)")
            return
        }
        #expect(deadline == 1_900_000_000_000)
        #expect((29...30).contains(seconds))

        // Still served: health, metrics, readiness (503 saying why).
        #expect(try request(server, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 200"))
        let metrics = try request(server, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(metrics.hasPrefix("HTTP/1.1 200") && metrics.contains("\nswiftlet_draining 1\n"))
        let ready = try request(server, "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(ready.hasPrefix("HTTP/1.1 503"))
        #expect(ready.contains("draining"))
        // New sessions: the WebSocket upgrade and WHIP/WHEP offers.
        let bob = try BlockingWebSocket(server)
        let refusal = try #require(bob.refusal)
        #expect(refusal.hasPrefix("HTTP/1.1 503"))
        #expect(Self.retryAfter(refusal).map { (29...30).contains($0) } == true, "\(refusal)")
        for path in ["/whip/r", "/whep/r"] {
            let whip = try request(
                server,
                "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\nContent-Length: 3\r\n"
                    + "Connection: close\r\n\r\nv=0")
            #expect(whip.hasPrefix("HTTP/1.1 503"), "\(path): \(whip)")
            #expect(Self.retryAfter(whip) != nil, "\(path): \(whip)")
        }
        #expect(server.service.snapshot.participants == 1)

        // The end: a close frame with 1001; our close completes the
        // handshake and the server lets the connection go.
        #expect(server.closeSessions(wait: .zero) <= 1)
        guard case .closed(let code, _)? = alice.next() else {
            Issue.record("no close frame")
            return
        }
        #expect(code == .goingAway)
        let end = Date().addingTimeInterval(5)
        while server.service.snapshot.webSockets > 0, Date() < end { usleep(10_000) }
        #expect(server.service.snapshot.webSockets == 0)
    }

    private static func retryAfter(_ response: String) -> Int? {
        response.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("retry-after:") }
            .flatMap { Int($0.dropFirst("retry-after:".count).trimmingCharacters(in: .whitespaces)) }
    }

    /// Runs `Scripts/interop/signaling_client.py` against `server` and
    /// returns its one JSON line.
    private func signalingClient(
        _ server: SignalingServer, tokens: [String: String], arguments: [String] = []
    ) throws -> [String: Any] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let python = root.appendingPathComponent(".venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "run Scripts/setup: \(python.path) is missing")
        let process = Process()
        process.executableURL = python
        process.arguments =
            [
                root.appendingPathComponent("Scripts/interop/signaling_client.py").path,
                "--url", "ws://127.0.0.1:\(server.localAddress.port)/rtc",
                "--tokens", String(decoding: try JSONEncoder().encode(tokens), as: UTF8.self),
            ] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning { process.terminate() }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "output: \(text)")
    }

    @Test func roomProtocolWorksWithPythonWebsockets() throws {
        let server = try startServer()
        defer { server.stop() }
        let tokens = [
            "alice": token("alice", room: "m"), "bob": token("bob", room: "m"),
            "carol": token("carol", room: "lobby"), "dave": token("dave", room: "lobby"),
            "erin": token("erin", room: "close"), "frank": token("frank", room: "close"),
        ]
        // Alice's join creates room "m" in mesh mode; Bob joins it as it is.
        let results = try signalingClient(server, tokens: tokens)
        #expect(results["errors"] == nil, "\(results["errors"] ?? "")")
        for check in [
            "mesh_mode", "mesh_relay", "mesh_leave", "mesh_bob_sees_alice", "mesh_alice_sees_bob", "call_rings", "call_started",
            "call_ended", "call_unknown_is_error", "call_self_is_error", "bad_token_refused", "bad_json_is_error",
            "oversized_closes_1009", "close_1000_leaves", "close_1001_leaves", "tcp_drop_resumes", "close_4000_resumes",
        ] {
            #expect(results[check] as? Bool == true, "\(check): \(results[check] ?? "missing")")
        }
    }

    /// A close the server starts (here its WebSocket timeout, with 1001) is
    /// not the client going away, though the code is the one a closing tab
    /// sends: the participant keeps its grace period and the rejoin resumes
    /// it. (The server closes the socket after its close frame, so the
    /// client's echo never arrives; HTTPSession also ignores an echo that
    /// does, for a close that waits for it.)
    @Test func aConnectionTheServerClosesKeepsItsGracePeriod() throws {
        var timeouts = SignalingTimeouts()
        timeouts.ping = .seconds(30)
        timeouts.webSocket = .milliseconds(500)
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: Self.keys),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(), timeouts: timeouts)
        defer { server.stop() }
        let results = try signalingClient(server, tokens: ["gina": token("gina", room: "e")], arguments: ["--server-close"])
        #expect(results["errors"] == nil, "\(results)")
        #expect(results["server_closed_1001"] as? Bool == true, "\(results)")
        #expect(results["echo_keeps_grace"] as? Bool == true, "\(results)")
    }
}

/// Slow and idle signalling connections are closed on time.
@Suite(.serialized) struct SignalingTimeoutTests {
    @Test func aSlowRequestGets408AndAnIdleConnectionIsClosed() throws {
        var timeouts = SignalingTimeouts()
        timeouts.request = .milliseconds(300)
        timeouts.idle = .milliseconds(500)
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(), timeouts: timeouts)
        defer { server.stop() }
        let slow = try rawTCPExchange(server, sending: "GET /healthz HTTP/1.1\r\nHost: x\r\n")
        #expect(slow.response.hasPrefix("HTTP/1.1 408"))
        #expect(slow.seconds >= 0.25 && slow.seconds < 3)
        let idle = try rawTCPExchange(server, sending: "")
        #expect(idle.response.isEmpty)
        #expect(idle.seconds >= 0.4 && idle.seconds < 3)
    }
}
