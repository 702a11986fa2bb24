import Foundation
import RedisTesting
import Testing

/// Issue #15, "signalling through any node": node A takes no rooms
/// (`--node-max-rooms 0`), node B does; a client that joins through A is
/// served by B (the room's home in Redis), A only relays its signalling.
/// Real processes, a real Redis, all on loopback (127.0.0.1 and 127.0.0.2).
@Suite(.serialized) struct ClusterProxyProcessTests {
    struct Node {
        let process: Process
        let output: OutputReader
        let url: String
        var port: UInt16 { UInt16(url.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 0 }
        var http: String { url.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/rtc", with: "") }
        func metric(_ name: String) -> Double? { (try? serverMetrics(url))?[name] }
        func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    func start(_ ip: String, _ name: String, redis: RedisServerProcess, _ extra: [String] = []) throws -> Node {
        let (process, output, url) = try startDevServer(
            [
                "--http", "\(ip):0", "--media-bind", ip, "--redis", "unix:\(redis.socketPath)", "--node-name", name,
            ] + extra)
        return Node(process: process, output: output, url: url)
    }

    func wait(_ seconds: Double, until done: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while !done(), Date() < end { usleep(100_000) }
        return done()
    }

    func redisCLI(_ redis: RedisServerProcess, _ arguments: [String]) -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        p.arguments = ["-s", redis.socketPath] + arguments
        let out = Pipe()
        p.standardOutput = out
        guard (try? p.run()) != nil else { return "" }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Test 1 of the issue: the room lives on B (Redis says so), the SDP
    /// answer's candidates are B's, A forwards no media, and a dropped
    /// WebSocket resumes through A.
    @Test(.timeLimit(.minutes(2)))
    func aJoinThroughAnEntryNodeIsServedByTheRoomsNode() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        let b = try start("127.0.0.2", "node-b", redis: redis)
        defer { b.stop() }
        let a = try start("127.0.0.1", "node-a", redis: redis, ["--node-max-rooms", "0"])
        defer { a.stop() }
        #expect(wait(10) { a.metric("swiftlet_cluster_nodes") == 2 && b.metric("swiftlet_cluster_nodes") == 2 })

        let client = try ProcessTestClient(port: a.port, ip: "127.0.0.1")
        #expect(try client.joinAndPublishAudio(room: "far", identity: "alice"))
        // The room's home is B, by Redis.
        #expect(redisCLI(redis, ["HGET", "swiftlet:room:far", "node"]).hasPrefix("node-b~"))
        // The answer names B's media address only.
        let answer = try #require(client.message("publish-answer")?["sdp"] as? String)
        let candidates = answer.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("a=candidate") }
        #expect(!candidates.isEmpty, "\(answer)")
        #expect(candidates.allSatisfy { $0.contains(" 127.0.0.2 ") })
        #expect(b.metric("swiftlet_participants") == 1)
        #expect(a.metric("swiftlet_participants") == 0)
        #expect(a.metric("swiftlet_rooms") == 0)
        #expect(a.metric("swiftlet_cluster_proxied_sessions") == 1)

        // A second participant through A subscribes to alice's audio:
        // the media flows on B, A forwards nothing.
        let bob = try ProcessTestClient(port: a.port, ip: "127.0.0.1")
        #expect(bob.join(room: "far", identity: "bob"))
        #expect(b.metric("swiftlet_participants") == 2)
        #expect(a.metric("swiftlet_forwarded_packets_total") == 0)

        // Alice's WebSocket drops (no close frame): she resumes through A
        // within B's grace period, and her media transport on B lives on.
        shutdown(client.signaling.descriptor, Int32(SHUT_RDWR))
        let again = try ProcessTestClient(port: a.port, ip: "127.0.0.1")
        #expect(again.join(room: "far", identity: "alice"))
        #expect(again.message("joined")?["resumed"] as? Bool == true)
        #expect(b.metric("swiftlet_participants") == 2)
        #expect(wait(5) { a.metric("swiftlet_cluster_proxied_sessions") == 2 })
    }

    /// A proxied session whose room's node dies is closed with 1012
    /// (service restart) so that the client resumes; A counts it lost.
    @Test(.timeLimit(.minutes(2)))
    func aLostRoomNodeEndsTheProxiedSessionWithServiceRestart() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        let b = try start("127.0.0.2", "node-b", redis: redis)
        defer { b.stop() }
        let a = try start("127.0.0.1", "node-a", redis: redis, ["--node-max-rooms", "0"])
        defer { a.stop() }
        #expect(wait(10) { a.metric("swiftlet_cluster_nodes") == 2 })
        let client = try ProcessTestClient(port: a.port, ip: "127.0.0.1")
        #expect(client.join(room: "doomed", identity: "carol"))
        b.stop()
        #expect(client.run(for: .seconds(5)) { client.closedReason != nil })
        #expect(client.closedReason?.hasPrefix("websocket closed 1012") == true)
        #expect(a.metric("swiftlet_cluster_proxied_lost_total") == 1)
        #expect(a.metric("swiftlet_cluster_proxied_sessions") == 0)
    }

    /// Test 4 of the issue, its signalling half: with Redis stopped, new
    /// joins get 503 with the reason and /readyz is not ready; within 2 s
    /// of Redis returning the nodes are registered and joins work again.
    @Test(.timeLimit(.minutes(2)))
    func whileRedisIsAwayNewJoinsGet503AndTheNodeComesBack() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        let b = try start("127.0.0.2", "node-b", redis: redis)
        defer { b.stop() }
        #expect(wait(10) { b.metric("swiftlet_cluster_connected") == 1 })
        let live = try ProcessTestClient(port: b.port, ip: "127.0.0.2")
        #expect(live.join(room: "steady", identity: "dave"))

        redis.stop(keepingFolder: true)
        // The next refresh (every 2 s) fails.
        #expect(wait(6) { b.metric("swiftlet_cluster_connected") == 0 })
        let upgrade = try curl([
            "-H", "Connection: Upgrade", "-H", "Upgrade: websocket", "-H", "Sec-WebSocket-Version: 13",
            "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "\(b.http)/rtc",
        ])
        #expect(upgrade.hasPrefix("HTTP/1.1 503"))
        #expect(upgrade.contains("cluster unavailable"))
        #expect(try curl(["\(b.http)/readyz"]).hasPrefix("HTTP/1.1 503"))
        // The live session is untouched.
        #expect(live.closedReason == nil)

        try redis.start()
        let back = Date()
        #expect(wait(5) { b.metric("swiftlet_cluster_connected") == 1 })
        #expect(Date().timeIntervalSince(back) < 2.5)
        #expect(try curl(["\(b.http)/readyz"]).hasPrefix("HTTP/1.1 200"))
        let later = try ProcessTestClient(port: b.port, ip: "127.0.0.2")
        #expect(later.join(room: "steady", identity: "erin"), "\(later.messages) \(b.output.text.suffix(3000))")
    }

    /// A room that ends is released in Redis (its hash deleted) within two
    /// refreshes; a room whose home in Redis moved to another node is
    /// dropped here and its clients are told to join again (1012).
    @Test(.timeLimit(.minutes(2)))
    func roomHomesAreReleasedWhenRoomsEndAndStaleCopiesAreDropped() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        let b = try start("127.0.0.2", "node-b", redis: redis)
        defer { b.stop() }
        #expect(wait(10) { b.metric("swiftlet_cluster_connected") == 1 })

        let brief = try ProcessTestClient(port: b.port, ip: "127.0.0.2")
        #expect(brief.join(room: "brief", identity: "fay"))
        #expect(redisCLI(redis, ["HGET", "swiftlet:room:brief", "node"]).hasPrefix("node-b~"))
        brief.send(["type": "leave"])
        #expect(wait(10) { redisCLI(redis, ["EXISTS", "swiftlet:room:brief"]).hasPrefix("0") })
        #expect(b.metric("swiftlet_cluster_room_releases_total") == 1)

        let stale = try ProcessTestClient(port: b.port, ip: "127.0.0.2")
        #expect(stale.join(room: "moved", identity: "gus"))
        #expect(wait(5) { b.metric("swiftlet_cluster_rooms_claimed") == 1 })
        // Another node took the room (as after B was thought dead).
        _ = redisCLI(redis, ["HSET", "swiftlet:room:moved", "node", "node-z~1", "epoch", "99"])
        #expect(stale.run(for: .seconds(6)) { stale.closedReason != nil })
        #expect(stale.closedReason?.hasPrefix("websocket closed 1012") == true)
        #expect(b.metric("swiftlet_cluster_stale_rooms_dropped_total") == 1)
        #expect(b.metric("swiftlet_rooms") == 0)
    }

    /// The cascade's first layer: every pair of live nodes keeps one
    /// DTLS-SRTP relay transport between their first media workers, set up
    /// from their records in Redis alone; a node that dies is dropped from
    /// the plan once its record expires.
    @Test(.timeLimit(.minutes(2)))
    func liveNodesKeepARelayTransportPerPair() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        let a = try start("127.0.0.1", "node-a", redis: redis)
        defer { a.stop() }
        let b = try start("127.0.0.2", "node-b", redis: redis)
        defer { b.stop() }
        let c = try start("127.0.0.3", "node-c", redis: redis)
        defer { c.stop() }
        let connected = "swiftlet_cluster_relay_links{state=\"connected\"}"
        #expect(wait(15) { [a, b, c].allSatisfy { $0.metric(connected) == 2 } })
        c.stop()
        // c's record lives 6 s after its last refresh; the others read every 2 s.
        #expect(wait(15) { [a, b].allSatisfy { $0.metric(connected) == 1 } })
    }
}
