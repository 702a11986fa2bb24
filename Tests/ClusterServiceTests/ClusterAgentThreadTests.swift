import Cluster
import ClusterService
import Foundation
import RedisTesting
import Testing

extension ClusterProcessSuite {
    /// The agent's thread between refreshes: asleep until the next one, awake
    /// at once for `stop`.
    @Suite(.timeLimit(.minutes(1))) struct ClusterAgentThreadTests {
        static let keys = ClusterKeys(prefix: "t")

        func connection(_ server: RedisServerProcess) throws -> RedisConnection {
            try RedisConnection(endpoint: .unix(path: server.socketPath), timeout: .seconds(2))
        }

        /// Polls (bounded) until `done`, and records a failure saying what did not happen.
        func waitFor(_ what: String, within seconds: Double = 3, _ done: () throws -> Bool) rethrows {
            let deadline = Date().addingTimeInterval(seconds)
            while try !done(), Date() < deadline { usleep(10_000) }
            #expect(try done(), "\(what) within \(seconds) s")
        }

        /// Between refreshes the agent's thread sleeps until the next one, and
        /// `stop` wakes it at once.
        @Test func anIdleAgentSleepsUntilItsNextRefreshAndStopsAtOnce() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let before = Self.threads(named: "swiftlet-cluste")
            let a = ClusterAgent(
                endpoint: .unix(path: server.socketPath),
                record: NodeRecord(id: NodeID(rawValue: "idle"), httpAddress: "https://idle", relayAddress: "idle:1"),
                keys: Self.keys,
                timing: ClusterTiming(refreshInterval: .seconds(30), recordLifetime: .seconds(90), commandTimeout: .seconds(1)),
                load: { NodeLoad() })
            a.start()
            waitFor("registered") { a.refreshCount == 1 }
            // Another suite's agent may have started meanwhile: the quietest
            // new thread is ours.
            let started = Self.threads(named: "swiftlet-cluste").subtracting(before).sorted()
            #expect(!started.isEmpty)
            let switchesBefore = started.map(Self.voluntarySwitches)
            usleep(1_000_000)
            let switches = zip(started, switchesBefore).map { Self.voluntarySwitches($0) - $1 }.min() ?? .max
            // A 20 ms polling loop would wake about 50 times in this second.
            #expect(switches <= 3, "woke \(switches) times in 1 s while idle")
            let stopping = Date()
            a.stop()
            #expect(Date().timeIntervalSince(stopping) < 0.5)
            #expect(try connection(server).call(["EXISTS", "t:node:idle"]) == .integer(0))
        }

        /// A node that registered after this agent's last refresh is found
        /// by a read (a join must not fail because this node's view is up to
        /// 2 s old: seen with `Scripts/cluster-failover`); an expired or
        /// unknown node is nil.
        @Test func aNodeThatRegisteredSinceTheLastRefreshIsReadFromRedis() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let a = ClusterAgent(
                endpoint: .unix(path: server.socketPath),
                record: NodeRecord(id: NodeID(rawValue: "early"), httpAddress: "http://early", relayAddress: "early:1"),
                keys: Self.keys,
                timing: ClusterTiming(refreshInterval: .seconds(30), recordLifetime: .seconds(90), commandTimeout: .seconds(1)),
                load: { NodeLoad() })
            a.start()
            defer { a.stop() }
            waitFor("registered") { a.refreshCount == 1 }
            let late = NodeRecord(id: NodeID(rawValue: "late"), httpAddress: "http://late:8080", relayAddress: "late:1")
            let registry = ClusterRegistry(
                connection: try connection(server), keys: Self.keys,
                timing: ClusterTiming(refreshInterval: .seconds(30), recordLifetime: .seconds(90), commandTimeout: .seconds(1)),
                wallClockMilliseconds: { 0 })
            try registry.register(late)
            guard case .connected(let seen) = a.status else {
                Issue.record("not connected")
                return
            }
            #expect(!seen.contains { $0.id == late.id })
            #expect(try a.liveRecord(of: late.id) == late)
            #expect(try a.liveRecord(of: NodeID(rawValue: "nobody")) == nil)
        }

        /// This process's threads whose name starts with `prefix`, by task id.
        static func threads(named prefix: String) -> Set<String> {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return Set(
                tasks.filter { task in
                    let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
                    return comm.hasPrefix(prefix)
                })
        }

        static func voluntarySwitches(_ task: String) -> Int {
            let status = (try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)) ?? ""
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                return Int(line.dropFirst("voluntary_ctxt_switches:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            return 0
        }
    }
}
