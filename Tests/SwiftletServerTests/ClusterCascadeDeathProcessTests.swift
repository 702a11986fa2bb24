import Foundation
import RedisTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ClusterProcessSuite {
    /// Issue #15, test 3 with the cascade: a room over four nodes (at most
    /// two of its participants each), one of them killed with SIGKILL. The
    /// participants on the other nodes keep their media without a freeze
    /// (the surviving parts keep forwarding among themselves), and the
    /// dead node's clients, entered through node A, join again and get
    /// media again. Real processes, a real Redis, all on loopback
    /// (127.0.0.1 to 127.0.0.4).
    @Suite(.serialized) struct ClusterCascadeDeathProcessTests {
        private let cluster = ClusterProxyProcessTests()
        private typealias Cascade = ClusterCascadeTesting

        @Test(.timeLimit(.minutes(2)))
        func theSurvivingPartsKeepTheirMediaAndTheDeadNodesClientsGetMediaAgain() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let capacity = ["--room-node-capacity", "2", "--workers", "1"]
            let names = ["node-a", "node-b", "node-c", "node-d"]
            var nodes: [ClusterProxyProcessTests.Node] = []
            defer { for n in nodes { n.stop() } }
            for (i, name) in names.enumerated() {
                nodes.append(try cluster.start("127.0.0.\(i + 1)", name, redis: redis, capacity))
            }
            #expect(cluster.wait(15) { nodes.allSatisfy { $0.metric("swiftlet_cluster_relay_links{state=\"connected\"}") == 3 } })

            let json = Cascade.reportPath()
            defer { try? FileManager.default.removeItem(at: json) }
            let bot = try Cascade.roombot(
                nodes[0].url, room: "wide",
                [
                    "--publishers", "1", "--subscribers", "4", "--audio-only", "--ramp", "2", "--duration", "22",
                    "--connect-timeout", "20", "--json", json.path,
                ])
            defer { if bot.process.isRunning { kill(bot.process.processIdentifier, SIGKILL) } }
            #expect(bot.wait(for: "4 flowing", seconds: 20), "\(bot.output)")
            usleep(1_000_000)

            // The victim: a node that serves subscribers only and is not the
            // entry node (its clients' signalling goes through A).
            let before = Cascade.parts(redis, "wide")
            let publisherNode = try #require(before.first { $0.value.contains { $0.contains("-publisher-") } }?.key, "\(before)")
            let victimID = try #require(
                before.keys.sorted().first { !$0.hasPrefix("node-a~") && $0 != publisherNode }, "\(before)")
            let moved = try #require(before[victimID])
            let victim = try #require(names.firstIndex { victimID.hasPrefix($0 + "~") })
            #expect(before.count >= 3, "\(before)")

            let killed = Date()
            nodes[victim].stop()
            let offset = bot.output.utf8.count
            var rejoined = false
            var flowing = false
            while !flowing, Date().timeIntervalSince(killed) < 20 {
                if !rejoined {
                    rejoined = bot.wait(for: "joined again (not resumed", seconds: 0.2, after: offset)
                } else {
                    flowing = bot.wait(for: "4 flowing", seconds: 0.2, after: bot.output.utf8.count)
                }
            }
            let recoveredAfter = Date().timeIntervalSince(killed)
            #expect(flowing, "no media for the dead node's clients within 20 s: \(bot.output)")
            // Their new node writes its part within 250 ms of their join.
            var after = Cascade.parts(redis, "wide")
            let listed = Date()
            while !Set(after.values.flatMap { $0 }).isSuperset(of: moved), Date().timeIntervalSince(listed) < 2 {
                usleep(100_000)
                after = Cascade.parts(redis, "wide")
            }
            #expect(after[victimID] == nil, "\(after)")
            #expect(Set(after.values.flatMap { $0 }).isSuperset(of: moved), "\(after)")

            let status = bot.finish(within: 40)
            #expect(status == 0, "\(bot.output)")
            let report = try Cascade.report(at: json)
            let bots = try #require(report["bots"] as? [[String: Any]])
            let rejoins = Dictionary(
                uniqueKeysWithValues: bots.compactMap { b in
                    (b["identity"] as? String).map { ($0, b["rejoins"] as? Int ?? -1) }
                })
            for identity in rejoins.keys.sorted() {
                #expect(rejoins[identity] == (moved.contains(identity) ? 1 : 0), "\(identity): \(rejoins)")
            }
            // No freeze for the others: their longest gap stays under a second.
            let stalls = try #require(report["longestStalls"] as? [[String: Any]])
            for s in stalls {
                guard let who = s["bot"] as? String, !moved.contains(who) else { continue }
                let longest = s["longestSeconds"] as? Double ?? .infinity
                #expect(longest < 1.0, "\(who) stalled \(longest) s: \(stalls)")
            }
            print("cascade node death: \(victimID) held \(moved); media again after \(recoveredAfter) s; stalls \(stalls)")
        }
    }
}
