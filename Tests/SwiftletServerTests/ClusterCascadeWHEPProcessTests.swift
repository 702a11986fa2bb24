import Foundation
import RedisTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ClusterProcessSuite {
    /// WHEP audiences beyond the room's home (issue #15: "when the home is
    /// at roomNodeCapacity, new participants' media is placed on another
    /// node", WHIP and WHEP included). Three nodes of two participants a
    /// room each; roombot's WHIP publisher and five WHEP viewers all enter
    /// through node A, the room's home: the publisher and the first viewer
    /// stay on A, the other four are placed on B and C, whose first viewer
    /// is answered with the publisher's tracks read from A's part in Redis
    /// (B and C serve no part of the room before it). Every viewer plays
    /// audio and video, relayed by A alone; a DELETE sent to A ends a
    /// session on the node its id names. Real processes, a real Redis, all
    /// on loopback.
    @Suite(.serialized) struct ClusterCascadeWHEPProcessTests {
        private let cluster = ClusterProxyProcessTests()
        private typealias Cascade = ClusterCascadeTesting

        @Test(.timeLimit(.minutes(2)))
        func whepViewersBeyondTheHomeAreServedByOtherPartsAndLeaveByDeleteThroughAnyNode() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            let capacity = ["--room-node-capacity", "2", "--workers", "1"]
            let a = try cluster.start("127.0.0.1", "node-a", redis: redis, capacity + ["--region", "here"])
            defer { a.stop() }
            // B and C take three each: room for a WHEP session of curl's,
            // below, beside roombot's four far viewers.
            let far = ["--room-node-capacity", "3", "--workers", "1", "--region", "there"]
            let b = try cluster.start("127.0.0.2", "node-b", redis: redis, far)
            defer { b.stop() }
            let c = try cluster.start("127.0.0.3", "node-c", redis: redis, far)
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
            // Two bots a second: each session is placed after the previous
            // one's part reached Redis (written within 250 ms).
            let bot = try Cascade.roombot(
                a.http, room: "audience",
                [
                    "--publishers", "1", "--subscribers", "5", "--whip", "--whep", "--ramp", "3", "--duration", "12", "--json",
                    json.path,
                ])
            defer { if bot.process.isRunning { kill(bot.process.processIdentifier, SIGKILL) } }
            #expect(bot.wait(for: " 10 flowing", seconds: 25), "\(bot.output)")

            // Two on A (the publisher and one viewer), the four other
            // viewers on B and C (how many on each is placement's rule:
            // docs/CLUSTER.md), by each node's count of its participants.
            let counts = nodes.map { Int($0.metric("swiftlet_participants") ?? -1) }
            #expect(counts[0] == 2, "participants per node \(counts)")
            #expect(counts[1] + counts[2] == 4 && counts[1] > 0 && counts[2] > 0, "participants per node \(counts)")
            // Only A sends relayed media, to both far nodes; they relay
            // nothing on.
            func relayed(_ node: ClusterProxyProcessTests.Node, to peer: String) -> Double {
                Cascade.sum(
                    (try? serverMetrics(node.url)) ?? [:], "swiftlet_cluster_relay_bytes_total",
                    ["peer=\"\(peer)~", "direction=\"out\""])
            }
            #expect(relayed(a, to: "node-b") > 10_000 && relayed(a, to: "node-c") > 10_000)
            #expect(relayed(b, to: "node-c") == 0 && relayed(c, to: "node-b") == 0)
            #expect(relayed(b, to: "node-a") < 1_000 && relayed(c, to: "node-a") < 1_000)

            // One more WHEP session, by curl through A: placed on B or C,
            // its Location names that node, and a DELETE sent to A ends it
            // there.
            let offer = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appending(path: "../SDPTests/Fixtures/chromium-recvonly.sdp").standardized.path
            let created = try curl([
                "-X", "POST", "-H", "Content-Type: application/sdp", "-H",
                "Authorization: Bearer \(ProcessTestClient.devToken(identity: "curl-viewer", room: "audience"))",
                "--data-binary", "@\(offer)", "\(a.http)/whep/audience",
            ])
            #expect(created.hasPrefix("HTTP/1.1 201"), "\(created)")
            let session = try #require(cluster.location(created), "\(created)")
            #expect(session.hasPrefix("/whep/audience/SE_"), "\(session)")
            let named = session.split(separator: "@").last.map { String($0.split(separator: "~")[0]) }
            let holder = try #require(named == "node-b" ? b : named == "node-c" ? c : nil, "\(session)")
            let before = holder.metric("swiftlet_participants") ?? 0
            #expect(try curl(["-X", "DELETE", "\(a.http)\(session)"]).hasPrefix("HTTP/1.1 200"))
            #expect(holder.output.wait(for: "WHEP session ended by DELETE", seconds: 2))
            #expect(holder.metric("swiftlet_participants") == before - 1)
            #expect(try curl(["-X", "DELETE", "\(a.http)\(session)"]).hasPrefix("HTTP/1.1 404"))

            #expect(bot.finish(within: 30) == 0, "\(bot.output)")
            let overall = try #require((Cascade.report(at: json)["groups"] as? [String: Any])?["overall"] as? [String: Any])
            #expect(overall["joined"] as? Int == 6)
            #expect(overall["tracksFlowing"] as? Int == 10, "\(overall)")
            // roombot leaves with a DELETE to A and closes its transports at
            // once; either ends each session on its node, well before the
            // transport's consent would run out.
            #expect(
                cluster.wait(5) { nodes.allSatisfy { $0.metric("swiftlet_participants") == 0 } },
                "participants per node \(nodes.map { $0.metric("swiftlet_participants") ?? -1 })")
            print(
                "cascade WHEP: participants per node \(counts), relayed A to B \(Int(relayed(a, to: "node-b") / 1000)) kB, "
                    + "A to C \(Int(relayed(a, to: "node-c") / 1000)) kB, packets \(overall["packets"] ?? 0)")
        }
    }
}
