import Cluster
import ClusterService
import Foundation
import RedisTesting
import Synchronization
import Testing
import Wire

extension ClusterProcessSuite {
    /// The registry and placement against a real redis-server (issue #15):
    /// liveness from expiring records, atomic placement under racing claims,
    /// re-homing with a newer epoch, and failing fast while Redis is away.
    @Suite(.serialized) struct ClusterRegistryTests {
        /// Short times so expiry is seen within a test.
        static let timing = ClusterTiming(
            refreshInterval: .milliseconds(100), recordLifetime: .milliseconds(400), commandTimeout: .milliseconds(500))

        static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

        func registry(_ server: RedisServerProcess, prefix: String = "t") throws -> ClusterRegistry {
            let connection = try RedisConnection(endpoint: .unix(path: server.socketPath), timeout: Self.timing.commandTimeout)
            return ClusterRegistry(
                connection: connection, keys: ClusterKeys(prefix: prefix), timing: Self.timing, wallClockMilliseconds: Self.now)
        }

        func record(_ name: String, participants: Int = 0) -> NodeRecord {
            NodeRecord(
                id: NodeID(rawValue: name), httpAddress: "https://\(name)", relayAddress: "\(name):3478",
                load: NodeLoad(participants: participants))
        }

        @Test func aNodeIsLiveWhileItsRecordIsAndGoneOnceItExpires() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let r = try registry(server)
            try r.register(record("a"))
            try r.register(record("b", participants: 4))
            #expect(try r.liveNodes().map(\.id.rawValue) == ["a", "b"])
            #expect(try r.liveNodes().last?.load.participants == 4)
            // a keeps refreshing; b stops (a crash): gone after its lifetime.
            let end = Date().addingTimeInterval(0.7)
            while Date() < end {
                try r.register(record("a"))
                usleep(100_000)
            }
            #expect(try r.liveNodes().map(\.id.rawValue) == ["a"])
            // The dead node's index entry went with that read.
            #expect(try r.connection.call(["ZCARD", "t:nodes"]) == .integer(1))
            // A clean stop removes the record at once.
            try r.deregister(NodeID(rawValue: "a"))
            #expect(try r.liveNodes().isEmpty)
        }

        /// Liveness is Redis's key expiry alone: a reader whose clock is an
        /// hour ahead of the writer's still sees the writer alive.
        @Test func clocksThatDisagreeStillAgreeOnWhoIsAlive() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            func registry(clock: @escaping () -> Int64) throws -> ClusterRegistry {
                ClusterRegistry(
                    connection: try RedisConnection(
                        endpoint: .unix(path: server.socketPath), timeout: Self.timing.commandTimeout),
                    keys: ClusterKeys(prefix: "t"), timing: Self.timing, wallClockMilliseconds: clock)
            }
            let behind = try registry { Self.now() - 3_600_000 }
            let ahead = try registry { Self.now() + 3_600_000 }
            try behind.register(record("slow-clock"))
            #expect(try ahead.liveNodes().map(\.id.rawValue) == ["slow-clock"])
            #expect(try behind.liveNodes().map(\.id.rawValue) == ["slow-clock"])
        }

        @Test func racingClaimsPlaceARoomOnceWithOneEpoch() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let setup = try registry(server)
            for n in ["a", "b", "c", "d"] { try setup.register(record(n)) }
            // Eight claimers, each proposing a different node, at once.
            let results = Mutex<[RoomHome]>([])
            let failures = Mutex<[String]>([])
            // Each thread owns its registry (one connection each).
            final class Owned: @unchecked Sendable {
                let registry: ClusterRegistry
                init(_ r: ClusterRegistry) { registry = r }
            }
            let threads = try (0..<8).map { i in
                let owned = Owned(try registry(server))
                return Thread {
                    do throws(ClusterError) {
                        let home = try owned.registry.claimRoom(
                            "standup", candidate: NodeID(rawValue: ["a", "b", "c", "d"][i % 4]))
                        results.withLock { $0.append(home) }
                    } catch { failures.withLock { $0.append(error.description) } }
                }
            }
            for t in threads { t.start() }
            let deadline = Date().addingTimeInterval(10)
            while results.withLock({ $0.count }) + failures.withLock({ $0.count }) < 8, Date() < deadline { usleep(10_000) }
            let homes = results.withLock { $0 }
            #expect(failures.withLock { $0 }.isEmpty)
            #expect(homes.count == 8)
            #expect(Set(homes.map(\.node)).count == 1)
            #expect(Set(homes.map(\.epoch)).count == 1)
            #expect(homes.filter(\.placedNow).count == 1)
        }

        @Test func aRoomWhoseHomeDiedIsRehomedWithANewerEpoch() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let r = try registry(server)
            try r.register(record("a"))
            let first = try r.placeRoom("class")
            #expect(first.node == NodeID(rawValue: "a") && first.placedNow)
            // While a lives, a claim proposing b keeps a.
            try r.register(record("b"))
            #expect(
                try r.claimRoom("class", candidate: NodeID(rawValue: "b"))
                    == RoomHome(node: first.node, epoch: first.epoch, placedNow: false))
            // a dies (no refresh); b lives on.
            let end = Date().addingTimeInterval(0.6)
            while Date() < end {
                try r.register(record("b"))
                usleep(100_000)
            }
            let second = try r.placeRoom("class")
            #expect(second.node == NodeID(rawValue: "b"))
            #expect(second.epoch > first.epoch)
            #expect(second.placedNow)
            // A proposal of a dead node is refused, never placed.
            #expect(throws: ClusterError.claim(.candidateNotLive)) {
                try r.claimRoom("other", candidate: NodeID(rawValue: "a"))
            }
            // A draining node takes no new room.
            var draining = record("b")
            draining.draining = true
            try r.register(draining)
            #expect(throws: ClusterError.noNodeAvailable) { try r.placeRoom("third") }
        }

        @Test func overTCPToo() throws {
            let server = try RedisServerProcess(tcp: true)
            defer { server.stop() }
            let port = try #require(server.port)
            let connection = try RedisConnection(endpoint: .tcp(host: "127.0.0.1", port: port), timeout: .seconds(2))
            #expect(try connection.call(["PING"]) == .status("PONG"))
            #expect(try connection.call(["SET", "k", "v\r\n"]) == .status("OK"))
            #expect(try connection.call(["GET", "k"]) == .bulk(Array("v\r\n".utf8)))
            #expect(try connection.call(["NOSUCHCOMMAND"]).text == nil)
        }

        @Test func anAbsentRedisFailsFastAndTheAgentRegistersAgainWhenItReturns() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let agent = ClusterAgent(
                endpoint: .unix(path: server.socketPath), record: record("n1"), keys: ClusterKeys(prefix: "t"),
                timing: ClusterTiming(
                    refreshInterval: .milliseconds(300), recordLifetime: .seconds(1), commandTimeout: .milliseconds(500)),
                load: { NodeLoad(participants: 2) })
            agent.start()
            defer { agent.stop() }
            func waitFor(_ what: String, within seconds: Double, _ done: () -> Bool) {
                let deadline = Date().addingTimeInterval(seconds)
                while !done(), Date() < deadline { usleep(20_000) }
                #expect(done(), "\(what) within \(seconds) s")
            }
            waitFor("registered", within: 3) {
                if case .connected(let nodes) = agent.status { nodes.map(\.id.rawValue) == ["n1"] } else { false }
            }
            #expect(try agent.placeRoom("r1").node == NodeID(rawValue: "n1"))

            server.stop(keepingFolder: true)
            let started = Date()
            #expect(throws: ClusterError.self) { try agent.placeRoom("r2") }
            #expect(Date().timeIntervalSince(started) < 1.5, "a join fails within the command timeout")
            waitFor("disconnected", within: 2) {
                if case .disconnected = agent.status { true } else { false }
            }

            try server.start()
            let back = Date()
            waitFor("registered again", within: 2) {
                if case .connected(let nodes) = agent.status { !nodes.isEmpty } else { false }
            }
            #expect(Date().timeIntervalSince(back) < 2)
            // The restarted Redis kept nothing (no persistence): the room is placed anew.
            #expect(try agent.placeRoom("r1").placedNow)
        }
    }
}
