import Foundation
import RedisTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ClusterProcessSuite {
    /// Issue #15, test 3 ("node death"), without the cascade: the room's node
    /// is killed while roombot's clients, entered through another node, have
    /// media. Its record expires, the room is placed again on the surviving
    /// node with a new epoch, and the clients get media again through the
    /// same entry node. Real processes, a real Redis, all on loopback
    /// (127.0.0.1 to 127.0.0.3).
    @Suite(.serialized) struct ClusterNodeDeathProcessTests {
        private let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache").path
        /// Node processes and Redis, as the proxy tests start them.
        private let cluster = ClusterProxyProcessTests()

        @Test(.timeLimit(.minutes(1)))
        func aDeadRoomNodesClientsGetMediaAgainThroughTheEntryNode() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let b = try cluster.start("127.0.0.2", "node-b", redis: redis)
            defer { b.stop() }
            let c = try cluster.start("127.0.0.3", "node-c", redis: redis)
            defer { c.stop() }
            let a = try cluster.start("127.0.0.1", "node-a", redis: redis, ["--node-max-rooms", "0"])
            defer { a.stop() }
            #expect(cluster.wait(10) { [a, b, c].allSatisfy { $0.metric("swiftlet_cluster_nodes") == 3 } })

            let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: json) }
            let bot = try RoomBotFailureTests.BotProcess([
                "--url", a.url, "--room", "phoenix", "--publishers", "1", "--subscribers", "2", "--dev", "--audio-only",
                "--duration", "24", "--connect-timeout", "20", "--cache-dir", cache, "--json", json.path,
            ])
            defer { if bot.process.isRunning { kill(bot.process.processIdentifier, SIGKILL) } }
            #expect(bot.wait(for: "2 flowing", seconds: 15), "\(bot.output)")

            // The room lives on B or C, never on A.
            let before = ClusterCascadeTesting.home(redis, "phoenix")
            let dead = try #require(before["node"], "\(before)")
            let epoch = try #require(before["epoch"].flatMap { Int($0) }, "\(before)")
            let (victim, survivor) = dead.hasPrefix("node-b~") ? (b, c) : (c, b)
            #expect(dead.hasPrefix("node-b~") || dead.hasPrefix("node-c~"), "\(dead)")
            #expect(victim.metric("swiftlet_rooms") == 1 && survivor.metric("swiftlet_rooms") == 0)

            let killed = Date()
            victim.stop()
            let resumedAt = bot.output.utf8.count
            var recordGoneAfter: Double?
            var homes: [String] = []
            var twoHomes: [String] = []
            // Until the bots rejoined and both subscribers' tracks flow again,
            // for at most 15 s: at every poll, one home in Redis and at most
            // one live node holding the room.
            var rejoined = false
            var flowing = false
            while !flowing, Date().timeIntervalSince(killed) < 15 {
                let now = ClusterCascadeTesting.home(redis, "phoenix")
                if let node = now["node"], homes.last != node { homes.append(node) }
                if now.keys.sorted() != ["epoch", "node"] { twoHomes.append("hash \(now)") }
                let holding = [a, survivor].filter { ($0.metric("swiftlet_rooms") ?? 0) > 0 }.count
                if holding > 1 { twoHomes.append("\(holding) live nodes hold the room") }
                if recordGoneAfter == nil, cluster.redisCLI(redis, ["EXISTS", "swiftlet:node:\(dead)"]).hasPrefix("0") {
                    recordGoneAfter = Date().timeIntervalSince(killed)
                }
                if !rejoined {
                    rejoined = bot.wait(for: "joined again (not resumed", seconds: 0.2, after: resumedAt)
                } else {
                    flowing = bot.wait(for: "2 flowing", seconds: 0.2, after: bot.output.utf8.count)
                }
            }
            let recoveredAfter = Date().timeIntervalSince(killed)
            #expect(flowing, "no media within 15 s of the kill: \(bot.output)")
            #expect(twoHomes.isEmpty, "\(twoHomes)")
            #expect((recordGoneAfter ?? .infinity) <= 8, "record of \(dead) gone after \(String(describing: recordGoneAfter)) s")

            // Placed again on the survivor, with a new, higher epoch.
            let after = ClusterCascadeTesting.home(redis, "phoenix")
            let moved = try #require(after["node"])
            #expect(moved != dead && !moved.hasPrefix("node-a~"), "\(after)")
            #expect(homes == [dead, moved], "\(homes)")
            #expect((after["epoch"].flatMap { Int($0) } ?? 0) > epoch, "\(before) \(after)")
            #expect(survivor.metric("swiftlet_rooms") == 1 && a.metric("swiftlet_rooms") == 0)

            let status = bot.finish(within: 30)
            #expect(status == 0, "\(bot.output)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
            let groups = try #require(report["groups"] as? [String: Any])
            let overall = try #require(groups["overall"] as? [String: Any])
            #expect(overall["rejoins"] as? Int == 3, "\(overall)")
            #expect((overall["errors"] as? [String: Int])?.isEmpty == true, "\(overall)")
            let bots = try #require(report["bots"] as? [[String: Any]])
            #expect(bots.map { $0["rejoins"] as? Int } == [1, 1, 1], "\(bots)")
            // Packets after the rejoin: the subscribers' recovery ended at a
            // received frame, within the 15 s.
            let recovery = try #require((groups["subscriber"] as? [String: Any])?["recoveryMs"] as? [String: Any])
            #expect(recovery["count"] as? Int == 2, "\(recovery)")
            let worst = recovery["max"] as? Double ?? .infinity
            #expect(worst < 15_000, "\(recovery)")
            print(
                "node death: record gone after \(recordGoneAfter ?? -1) s, media again by \(recoveredAfter) s;"
                    + " roombot recovery p50 \(recovery["p50"] ?? "-") ms, max \(worst) ms")
        }
    }
}
