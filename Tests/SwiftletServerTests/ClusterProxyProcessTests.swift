import Foundation
import RedisTesting
import Testing

extension ClusterProcessSuite {
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
}

/// WHIP and WHEP through any node (docs/CLUSTER.md): the same two nodes,
/// A entry-only; real clients (roombot's WHIP publisher and WHEP viewer,
/// curl with a real offer) reach the room's node B through A.
extension ClusterProcessSuite.ClusterProxyProcessTests {
    static let offerPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appending(path: "../SDPTests/Fixtures/aiortc-offer.sdp").standardized.path

    /// curl's WHIP POST of the committed aiortc offer.
    func whipArguments(_ url: String, identity: String, room: String) -> [String] {
        [
            "-X", "POST", "-H", "Content-Type: application/sdp", "-H",
            "Authorization: Bearer \(ProcessTestClient.devToken(identity: identity, room: room))",
            "--data-binary", "@\(Self.offerPath)", url,
        ]
    }

    /// The Location of a 201 in curl's `-i` output.
    func location(_ response: String) -> String? {
        response.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location: ") }.map { String($0.dropFirst(10)) }
    }

    @Test(.timeLimit(.minutes(2)))
    func whipAndWHEPThroughAnEntryNodeAreServedByTheRoomsNode() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        let b = try start("127.0.0.2", "node-b", redis: redis)
        defer { b.stop() }
        let a = try start("127.0.0.1", "node-a", redis: redis, ["--node-max-rooms", "0"])
        defer { a.stop() }
        #expect(wait(10) { a.metric("swiftlet_cluster_nodes") == 2 && b.metric("swiftlet_cluster_nodes") == 2 })

        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        bot.arguments = [
            "--url", a.http, "--room", "wfar", "--publishers", "1", "--subscribers", "1", "--whip", "--whep",
            "--duration", "6", "--dev", "--json", json.path,
        ]
        let botOutput = OutputReader()
        bot.standardOutput = botOutput.pipe
        bot.standardError = botOutput.pipe
        try bot.run()
        defer { if bot.isRunning { kill(bot.processIdentifier, SIGKILL) } }

        // Both sessions live on B, by Redis; A holds none.
        #expect(wait(15) { b.metric("swiftlet_participants") == 2 }, "\(b.output.text.suffix(3000))")
        #expect(redisCLI(redis, ["HGET", "swiftlet:room:wfar", "node"]).hasPrefix("node-b~"))
        #expect(a.metric("swiftlet_participants") == 0)
        #expect(a.metric("swiftlet_rooms") == 0)
        #expect(botOutput.waitForExit(bot, seconds: 30))
        #expect(bot.terminationStatus == 0, "\(botOutput.text)")

        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]
        let overall = try #require((object?["groups"] as? [String: Any])?["overall"] as? [String: Any])
        #expect(overall["joined"] as? Int == 2)
        #expect(overall["transportsConnected"] as? Int == 2)
        // The viewer plays the publisher's audio and video, forwarded by B.
        #expect(overall["tracksFlowing"] as? Int == 2, "\(overall)")
        #expect((overall["packets"] as? Int ?? 0) > 100, "\(overall)")
        #expect(a.metric("swiftlet_forwarded_packets_total") == 0)
        #expect(b.metric("swiftlet_forwarded_packets_total") ?? 0 > 100)
        #expect(a.metric(#"swiftlet_cluster_proxied_http_requests_total{outcome="relayed"}"#) ?? 0 >= 2)
        #expect(a.metric(#"swiftlet_cluster_proxied_http_requests_total{outcome="failed"}"#) == 0)
    }

    /// A WHIP POST waiting on a room's node that is stopped (SIGSTOP: its
    /// kernel still accepts the connection) blocks nothing on the entry
    /// node, and is answered once the node runs again; DELETE through the
    /// entry node ends the session on the room's node.
    @Test(.timeLimit(.minutes(2)))
    func aRequestWaitingOnAStoppedRoomNodeBlocksNothingAndDeleteEndsTheSessionThere() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        let b = try start("127.0.0.2", "node-b", redis: redis)
        defer { b.stop() }
        let a = try start("127.0.0.1", "node-a", redis: redis, ["--node-max-rooms", "0"])
        defer { a.stop() }
        #expect(wait(10) { a.metric("swiftlet_cluster_nodes") == 2 && b.metric("swiftlet_cluster_nodes") == 2 })

        let first = try curl(whipArguments("\(a.http)/whip/held", identity: "enc1", room: "held"))
        #expect(first.hasPrefix("HTTP/1.1 201"), "\(first)")
        #expect(redisCLI(redis, ["HGET", "swiftlet:room:held", "node"]).hasPrefix("node-b~"))
        #expect(b.metric("swiftlet_participants") == 1)

        kill(b.process.processIdentifier, SIGSTOP)
        // Never leave B stopped, whatever fails below; well under the 4 s
        // after which its record would expire.
        var resumed = false
        defer { if !resumed { kill(b.process.processIdentifier, SIGCONT) } }
        let waiting = Process()
        waiting.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        waiting.arguments =
            ["-s", "-i", "--max-time", "8"] + whipArguments("\(a.http)/whip/held", identity: "enc2", room: "held")
        let waitingOutput = OutputReader()
        waiting.standardOutput = waitingOutput.pipe
        try waiting.run()
        defer { if waiting.isRunning { kill(waiting.processIdentifier, SIGKILL) } }
        #expect(wait(2) { a.metric("swiftlet_cluster_proxied_http_requests_in_flight") == 1 })
        let asked = Date()
        #expect(try curl(["\(a.http)/healthz"]).hasPrefix("HTTP/1.1 200"))
        #expect(Date().timeIntervalSince(asked) < 0.5)
        #expect(waiting.isRunning)
        kill(b.process.processIdentifier, SIGCONT)
        resumed = true

        #expect(waitingOutput.waitForExit(waiting, seconds: 8))
        let second = waitingOutput.text
        #expect(second.hasPrefix("HTTP/1.1 201"), "\(second)")
        #expect(wait(5) { b.metric("swiftlet_participants") == 2 })
        #expect(a.metric("swiftlet_participants") == 0)

        // DELETE and PATCH through A, by the room in the Location.
        let session = try #require(location(first))
        #expect(session.hasPrefix("/whip/held/SE_"))
        #expect(try curl(["-X", "DELETE", "\(a.http)\(session)"]).hasPrefix("HTTP/1.1 200"))
        #expect(b.metric("swiftlet_participants") == 1)
        #expect(b.output.wait(for: "WHIP session ended by DELETE", seconds: 2))
        #expect(try curl(["-X", "DELETE", "\(a.http)\(session)"]).hasPrefix("HTTP/1.1 404"))
        #expect(a.metric(#"swiftlet_cluster_proxied_http_requests_total{outcome="relayed"}"#) == 4)
        #expect(a.metric("swiftlet_cluster_proxied_http_requests_in_flight") == 0)
    }

    /// Test 4 of the issue, its media half: a room joined through an entry
    /// node keeps its media untouched while Redis is stopped for 5 s
    /// (nothing on the media path or the proxied signalling needs Redis):
    /// roombot, running across the outage, sees no freeze and no loss.
    @Test(.timeLimit(.minutes(2)))
    func liveRoomsKeepTheirMediaWhileRedisIsAway() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        let b = try start("127.0.0.2", "node-b", redis: redis)
        defer { b.stop() }
        let a = try start("127.0.0.1", "node-a", redis: redis, ["--node-max-rooms", "0"])
        defer { a.stop() }
        #expect(wait(10) { a.metric("swiftlet_cluster_nodes") == 2 && b.metric("swiftlet_cluster_nodes") == 2 })

        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        bot.arguments = [
            "--url", a.url, "--room", "steady", "--publishers", "1", "--subscribers", "1", "--duration", "12", "--dev",
            "--json", json.path,
        ]
        let botOutput = OutputReader()
        bot.standardOutput = botOutput.pipe
        bot.standardError = botOutput.pipe
        try bot.run()
        defer { if bot.isRunning { kill(bot.processIdentifier, SIGKILL) } }
        #expect(wait(10) { b.metric("swiftlet_participants") == 2 })
        Thread.sleep(forTimeInterval: 2)
        redis.stop(keepingFolder: true)
        #expect(wait(6) { b.metric("swiftlet_cluster_connected") == 0 && a.metric("swiftlet_cluster_connected") == 0 })
        Thread.sleep(forTimeInterval: 3)
        try redis.start()
        #expect(botOutput.waitForExit(bot, seconds: 40))
        #expect(bot.terminationStatus == 0, "\(botOutput.text)")
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]
        let overall = try #require((object?["groups"] as? [String: Any])?["overall"] as? [String: Any])
        #expect(overall["tracksFlowing"] as? Int == 2, "\(overall)")
        #expect(overall["freezes"] as? Int == 0, "\(overall)")
        #expect((overall["errors"] as? [String: Int])?.isEmpty == true, "\(overall)")
        #expect(a.metric("swiftlet_cluster_proxied_lost_total") == 0)
    }
}
