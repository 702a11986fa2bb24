import Foundation
import RedisTesting

/// What the cascade's process tests (`ClusterCascade*ProcessTests`) read
/// of a running cluster and start in it: the rooms' homes and parts as their nodes
/// wrote them to Redis (`swiftlet:shards:<room>`, `swiftlet:shard:<room>:<id>`;
/// docs/CLUSTER.md, "The cascade"), labelled metrics summed, and roombot.
enum ClusterCascadeTesting {
    /// roombot's clip cache, shared by every test that runs it.
    static let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache").path
    private static let cluster = ClusterProcessSuite.ClusterProxyProcessTests()

    /// The sum of a metric's series whose labels contain each of `labels`
    /// (`peer="node-b~`, `direction="out"`).
    static func sum(_ metrics: [String: Double], _ name: String, _ labels: [String]) -> Double {
        metrics.filter { key, _ in key.hasPrefix(name + "{") && labels.allSatisfy { key.contains($0) } }.values.reduce(0, +)
    }

    /// A room's home in Redis (`swiftlet:room:<room>`): every field of its
    /// hash, `node` and `epoch` while it has one.
    static func home(_ redis: RedisServerProcess, _ room: String) -> [String: String] {
        let lines = cluster.redisCLI(redis, ["HGETALL", "swiftlet:room:\(room)"]).split(separator: "\n").map(String.init)
        var fields: [String: String] = [:]
        for i in stride(from: 0, to: lines.count - 1, by: 2) { fields[lines[i]] = lines[i + 1] }
        return fields
    }

    /// The full id (name and boot nonce) of the live node called `name`.
    static func nodeID(_ redis: RedisServerProcess, _ name: String) -> String? {
        cluster.redisCLI(redis, ["ZRANGE", "swiftlet:nodes", "0", "-1"]).split(separator: "\n").map(String.init)
            .first { $0.hasPrefix(name + "~") }
    }

    /// The identities a node's part of `room` lists; nil while the node
    /// has no readable part.
    static func identities(_ redis: RedisServerProcess, _ room: String, _ node: String) -> [String]? {
        let text = cluster.redisCLI(redis, ["GET", "swiftlet:shard:\(room):\(node)"])
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let participants = object["participants"] as? [[String: Any]]
        else { return nil }
        return participants.compactMap { $0["identity"] as? String }
    }

    /// The identities each node's part of `room` lists, by node id.
    static func parts(_ redis: RedisServerProcess, _ room: String) -> [String: [String]] {
        var out: [String: [String]] = [:]
        for node in cluster.redisCLI(redis, ["SMEMBERS", "swiftlet:shards:\(room)"]).split(separator: "\n") {
            out[String(node)] = identities(redis, room, String(node))
        }
        return out
    }

    /// The names (ids without their nonce) of the nodes whose part of
    /// `room` lists an identity containing `fragment`.
    static func holders(_ redis: RedisServerProcess, _ room: String, holding fragment: String) -> Set<String> {
        Set(
            parts(redis, room).filter { $0.value.contains { $0.contains(fragment) } }.keys.map {
                String($0.split(separator: "~")[0])
            })
    }

    /// roombot with dev tokens against `url`'s `room`, its clips cached.
    static func roombot(_ url: String, room: String, _ arguments: [String]) throws -> RoomBotFailureTests.BotProcess {
        try RoomBotFailureTests.BotProcess(
            ["--url", url, "--room", room, "--dev", "--cache-dir", cache] + arguments)
    }

    /// A fresh path for roombot's `--json` report.
    static func reportPath() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
    }

    /// roombot's `--json` report.
    static func report(at path: URL) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any] ?? [:]
    }
}
