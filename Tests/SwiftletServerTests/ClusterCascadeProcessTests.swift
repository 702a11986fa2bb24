import Foundation
import RedisTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ClusterProcessSuite {
    /// Issue #15, test 2 ("cascade"): a room larger than one node. Three
    /// nodes, each holding at most two participants of a room
    /// (`--room-node-capacity 2`); roombot's six bots (two publishers of
    /// VP8 simulcast and Opus, four subscribers) all enter through node A,
    /// whose region makes it the room's home. The publishers are served on
    /// A, two subscribers on B and two on C; every subscriber receives both
    /// publishers' tracks with no freeze, and each media packet crosses the
    /// relay to each far node once: only A sends relayed media, B and C
    /// relay nothing on.
    /// Real processes, a real Redis, all on loopback (127.0.0.1 to
    /// 127.0.0.3).
    @Suite(.serialized) struct ClusterCascadeProcessTests {
        private let cluster = ClusterProxyProcessTests()
        private typealias Cascade = ClusterCascadeTesting

        @Test(.timeLimit(.minutes(1)))
        func aRoomLargerThanANodeSpansThreeNodesAndEachPacketCrossesARelayOnce() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            // A's region is its own: the entry node's region comes first in
            // placement, so the room is homed on A; new parts go to B and C.
            let capacity = ["--room-node-capacity", "2", "--workers", "2"]
            let a = try cluster.start("127.0.0.1", "node-a", redis: redis, capacity + ["--region", "here"])
            defer { a.stop() }
            let b = try cluster.start("127.0.0.2", "node-b", redis: redis, capacity + ["--region", "there"])
            defer { b.stop() }
            let c = try cluster.start("127.0.0.3", "node-c", redis: redis, capacity + ["--region", "there"])
            defer { c.stop() }
            let nodes = [a, b, c]
            #expect(
                cluster.wait(15) {
                    nodes.allSatisfy {
                        $0.metric("swiftlet_cluster_nodes") == 3
                            && $0.metric("swiftlet_cluster_relay_links{state=\"connected\"}") == 2
                    }
                })

            let json = Cascade.reportPath()
            defer { try? FileManager.default.removeItem(at: json) }
            // Two bots a second: each join is placed after the previous
            // one's part reached Redis (written within 250 ms).
            let bot = try Cascade.roombot(
                a.url, room: "big",
                ["--publishers", "2", "--subscribers", "4", "--ramp", "2", "--duration", "16", "--json", json.path])
            defer { if bot.process.isRunning { kill(bot.process.processIdentifier, SIGKILL) } }
            #expect(bot.wait(for: " 16 flowing", seconds: 25), "\(bot.output)")

            // The room lives on all three nodes, two participants each, the
            // publishers on A.
            let participants = nodes.map { $0.metric("swiftlet_participants") ?? -1 }
            #expect(participants == [2, 2, 2], "\(participants)")
            let onA = Cascade.identities(redis, "big", Cascade.nodeID(redis, "node-a") ?? "?") ?? []
            #expect(onA.count == 2 && onA.allSatisfy { $0.contains("-publisher-") }, "\(onA)")
            #expect(nodes.allSatisfy { $0.metric("swiftlet_rooms") == 1 })
            let parts = cluster.redisCLI(redis, ["SMEMBERS", "swiftlet:shards:big"]).split(separator: "\n")
            #expect(parts.count == 3, "\(parts)")

            // The publisher's node (the room's home: its first participant)
            // sends relayed media to each other node; those relay nothing on
            // (a packet that came from a node never goes to another node).
            usleep(2_000_000)
            let metrics = nodes.map { (try? serverMetrics($0.url)) ?? [:] }
            let names = ["node-a~", "node-b~", "node-c~"]
            let sent = metrics.map { Cascade.sum($0, "swiftlet_cluster_relay_packets_total", ["direction=\"out\""]) }
            // Each node's part is written and its wake-ups arrive.
            for (i, m) in metrics.enumerated() {
                #expect(m["swiftlet_cluster_room_parts"] == 1, "\(names[i])")
                #expect(m["swiftlet_cluster_room_events_subscribed"] == 1, "\(names[i])")
                #expect((m["swiftlet_cluster_room_events_total"] ?? 0) > 0, "\(names[i])")
            }
            let sources = sent.indices.filter { sent[$0] > 0 }
            #expect(sources == [0], "relayed media sent per node: \(sent)")
            let source = 0
            for far in nodes.indices where far != source {
                let out = Cascade.sum(
                    metrics[source], "swiftlet_cluster_relay_packets_total", ["peer=\"\(names[far])", "direction=\"out\""])
                let received = Cascade.sum(
                    metrics[far], "swiftlet_cluster_relay_packets_total", ["peer=\"\(names[source])", "direction=\"in\""])
                #expect(out > 100, "\(names[source]) sent \(out) to \(names[far])")
                // Read a moment after the source's count: a few more may have
                // arrived, but a packet that crossed twice would double it.
                #expect(received > 100 && received <= out * 1.25, "\(names[far]) received \(received) of \(out)")
                // No publisher packet reached a far node twice (its
                // forwarders would drop the second as a duplicate).
                let duplicates = metrics[far]["swiftlet_dropped_packets_total{reason=\"duplicate\"}"]
                #expect(duplicates == 0, "\(names[far]): \(String(describing: duplicates)) duplicates")
            }
            let status = bot.finish(within: 30)
            #expect(status == 0, "\(bot.output)")
            let report = try Cascade.report(at: json)
            let groups = try #require(report["groups"] as? [String: Any])
            let overall = try #require(groups["overall"] as? [String: Any])
            #expect((overall["errors"] as? [String: Int])?.isEmpty == true, "\(overall)")
            // Both publishers' audio and video reach every subscriber.
            let bots = try #require(report["bots"] as? [[String: Any]])
            for b in bots where (b["role"] as? String) == "subscriber" {
                #expect(b["flowingByKind"] as? [String: Int] == ["audio": 2, "video": 2], "\(b)")
            }
            print("cascade: participants per node \(participants), relayed media packets sent per node \(sent)")
        }
    }
}
