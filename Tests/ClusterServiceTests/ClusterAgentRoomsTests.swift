import Cluster
import ClusterService
import Dispatch
import Foundation
import RedisTesting
import Synchronization
import Testing
import Wire

extension ClusterProcessSuite {
    /// A node's room homes against a real redis-server (issue #15): homes of
    /// rooms that ended are released, never one another node took over; homes
    /// Redis lost are claimed again; a room homed elsewhere is reported stale.
    @Suite(.serialized, .timeLimit(.minutes(1))) struct ClusterAgentRoomsTests {
        static let timing = ClusterTiming(
            refreshInterval: .milliseconds(100), recordLifetime: .seconds(1), commandTimeout: .milliseconds(500))
        static let keys = ClusterKeys(prefix: "t")

        /// The server's rooms as the agent sees them through its hooks.
        final class Rooms: Sendable {
            struct State {
                var local: Set<String> = []
                var calls = 0
                /// Rooms to add to `local` after that many more calls (a join
                /// that creates its room a refresh after placing it).
                var createLater: [String: Int] = [:]
                var dropped: [(String, RoomHome?)] = []
            }
            let state = Mutex(State())

            var hooks: ClusterRoomHooks {
                ClusterRoomHooks(
                    localRooms: { [self] in
                        state.withLock { s in
                            s.calls += 1
                            let rooms = Array(s.local)
                            for (room, left) in s.createLater {
                                if left <= 1 {
                                    s.local.insert(room)
                                    s.createLater[room] = nil
                                } else {
                                    s.createLater[room] = left - 1
                                }
                            }
                            return rooms
                        }
                    },
                    dropStale: { [self] room, home in state.withLock { $0.dropped.append((room, home)) } })
            }

            func set(_ rooms: Set<String>) { state.withLock { $0.local = rooms } }
            var calls: Int { state.withLock { $0.calls } }
            var dropped: [(String, RoomHome?)] { state.withLock { $0.dropped } }
        }

        func agent(_ server: RedisServerProcess, _ name: String, rooms: Rooms) -> ClusterAgent {
            let agent = ClusterAgent(
                endpoint: .unix(path: server.socketPath),
                record: NodeRecord(id: NodeID(rawValue: name), httpAddress: "https://\(name)", relayAddress: "\(name):3478"),
                keys: Self.keys, timing: Self.timing, load: { NodeLoad() })
            agent.setRoomHooks(rooms.hooks)
            return agent
        }

        func connection(_ server: RedisServerProcess) throws -> RedisConnection {
            try RedisConnection(endpoint: .unix(path: server.socketPath), timeout: .seconds(2))
        }

        func storedHome(_ c: RedisConnection, _ room: String) throws -> StoredRoomHome {
            try StoredRoomHome(reply: try c.call(StoredRoomHome.command(room: room, keys: Self.keys)))
        }

        /// Polls (bounded) until `done`, and records a failure saying what did not happen.
        func waitFor(_ what: String, within seconds: Double = 3, _ done: () throws -> Bool) rethrows {
            let deadline = Date().addingTimeInterval(seconds)
            while try !done(), Date() < deadline { usleep(10_000) }
            #expect(try done(), "\(what) within \(seconds) s")
        }

        /// Waits until the hooks have been asked `count` more times: that many
        /// more refreshes have begun.
        func waitForRefreshes(_ count: Int, of rooms: Rooms) {
            let target = rooms.calls + count
            waitFor("\(count) more refreshes") { rooms.calls >= target }
        }

        @Test func aRoomThatEndedHereIsReleasedWithinTwoRefreshes() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let rooms = Rooms()
            let a = agent(server, "a", rooms: rooms)
            a.start()
            defer { a.stop() }
            waitFor("registered") { a.refreshCount > 0 }
            let home = try a.placeRoom("standup")
            #expect(home.node == a.record.id && home.placedNow)
            #expect(a.claimedRoomCount == 1)
            rooms.set(["standup"])
            waitForRefreshes(3, of: rooms)
            let redis = try connection(server)
            #expect(try storedHome(redis, "standup") == .home(node: a.record.id, epoch: home.epoch))

            // The room ends: two refreshes without it, and its home is gone.
            let callsBefore = rooms.state.withLock { s in
                s.local = []
                return s.calls
            }
            try waitFor("released") { try storedHome(redis, "standup") == .missing }
            // Two refreshes without it released it; a third may have begun by now.
            #expect(rooms.calls - callsBefore <= 3)
            #expect(a.releaseCount == 1)
            #expect(a.claimedRoomCount == 0)
            #expect(a.redisErrorCount == 0)
            #expect(a.lastRefreshRoundTrip.map { $0 > .zero && $0 < .seconds(1) } == true)
        }

        /// A join places its room before creating it: the room is missing at
        /// the first refresh after the placement and there at the second. Its
        /// home stays.
        @Test func aJustPlacedRoomNotCreatedYetKeepsItsHome() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let rooms = Rooms()
            let a = agent(server, "a", rooms: rooms)
            a.start()
            defer { a.stop() }
            waitFor("registered") { a.refreshCount > 0 }
            // Armed before the placement: the first listing after the claim
            // lacks the room, the second has it (earlier still is harmless).
            rooms.state.withLock { $0.createLater["late"] = 1 }
            let home = try a.placeRoom("late")
            waitForRefreshes(4, of: rooms)
            #expect(rooms.state.withLock { $0.local } == ["late"])
            #expect(try storedHome(try connection(server), "late") == .home(node: a.record.id, epoch: home.epoch))
            #expect(a.releaseCount == 0 && a.claimedRoomCount == 1)
        }

        /// The script deletes only a home still naming the releaser at its
        /// epoch: with the home taken over by another node while the release
        /// runs, the home left is always the other node's.
        @Test func aReleaseNeverDeletesAHomeAnotherNodeTookOver() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            final class Owned: @unchecked Sendable {
                let registry: ClusterRegistry
                init(_ r: ClusterRegistry) { registry = r }
            }
            func registry() throws -> Owned {
                Owned(
                    ClusterRegistry(
                        connection: try connection(server), keys: Self.keys, timing: ClusterTiming(),
                        wallClockMilliseconds: { 0 }))
            }
            let (a, b) = (NodeID(rawValue: "a"), NodeID(rawValue: "b"))
            let (releaser, taker, setup) = (try registry(), try registry(), try registry())
            func record(_ id: NodeID) -> NodeRecord { NodeRecord(id: id, httpAddress: "https://x", relayAddress: "x:1") }
            try setup.registry.register(record(b))

            // Sequentially first: another node's home, and ours at an older epoch.
            try setup.registry.register(record(a))
            let ours = try setup.registry.claimRoom("r", candidate: a)
            try setup.registry.deregister(a)
            let theirs = try setup.registry.claimRoom("r", candidate: b)
            #expect(theirs.node == b && theirs.epoch > ours.epoch)
            let stale = RoomClaims.Release(room: "r", epoch: ours.epoch, generation: 1)
            #expect(try releaser.registry.release([stale], node: a) == [false])
            #expect(try storedHome(setup.registry.connection, "r") == .home(node: b, epoch: theirs.epoch))
            // Our node at another epoch than the release's is not ours either.
            #expect(try releaser.registry.release([stale], node: b) == [false])

            // Then racing: a releases its home while b takes the room over.
            // Either may go first; the home left is b's either way.
            for round in 0..<100 {
                let room = "race\(round)"
                try setup.registry.register(record(a))
                let home = try setup.registry.claimRoom(room, candidate: a)
                let outcome = Mutex<[Int: Result<Bool, ClusterError>]>([:])
                DispatchQueue.concurrentPerform(iterations: 2) { i in
                    do throws(ClusterError) {
                        if i == 0 {
                            let released = try releaser.registry.release(
                                [RoomClaims.Release(room: room, epoch: home.epoch, generation: 1)], node: a)
                            outcome.withLock { $0[0] = .success(released[0]) }
                        } else {
                            try taker.registry.deregister(a)
                            let took = try taker.registry.claimRoom(room, candidate: b)
                            outcome.withLock { $0[1] = .success(took.node == b) }
                        }
                    } catch { outcome.withLock { $0[i] = .failure(error) } }
                }
                let results = outcome.withLock { $0 }
                #expect(results[1] == .success(true))
                #expect(results[0] != nil)
                guard case .home(let node, _) = try storedHome(setup.registry.connection, room) else {
                    Issue.record("round \(round): the room has no home after the takeover")
                    return
                }
                #expect(node == b, "round \(round)")
            }
        }

        /// Redis restarted without persistence (FLUSHALL): the next refresh
        /// registers the node again and claims its local rooms again.
        @Test func roomsHostedHereAreClaimedAgainAfterRedisLosesEverything() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let rooms = Rooms()
            rooms.set(["one", "two"])
            let a = agent(server, "a", rooms: rooms)
            a.start()
            defer { a.stop() }
            let redis = try connection(server)
            // Local rooms with no home are claimed by the first refresh too.
            try waitFor("claimed") {
                try storedHome(redis, "one") != .missing && storedHome(redis, "two") != .missing
            }
            #expect(a.claimedRoomCount == 2)
            #expect(try redis.call(["FLUSHALL"]) == .status("OK"))
            try waitFor("claimed again") {
                if case .home(let n1, _) = try storedHome(redis, "one"), case .home(let n2, _) = try storedHome(redis, "two") {
                    return n1 == a.record.id && n2 == a.record.id
                }
                return false
            }
            #expect(rooms.dropped.isEmpty)
            #expect(a.claimedRoomCount == 2)
            #expect(try redis.call(["EXISTS", "t:node:a"]) == .integer(1))
        }

        /// Another node took the room with a new epoch (our home had died for
        /// it): this node's copy is reported stale, once, and its home is left
        /// alone when the copy is gone.
        @Test func aRoomHomedElsewhereNowIsReportedStale() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let rooms = Rooms()
            let a = agent(server, "a", rooms: rooms)
            a.start()
            defer { a.stop() }
            waitFor("registered") { a.refreshCount > 0 }
            let ours = try a.placeRoom("class")
            rooms.set(["class"])
            waitForRefreshes(2, of: rooms)

            let other = ClusterRegistry(
                connection: try connection(server), keys: Self.keys, timing: ClusterTiming(), wallClockMilliseconds: { 0 })
            let b = NodeID(rawValue: "b")
            try other.register(NodeRecord(id: b, httpAddress: "https://b", relayAddress: "b:1"))
            #expect(try other.connection.call(["DEL", Self.keys.room("class")]) == .integer(1))
            let theirs = try other.claimRoom("class", candidate: b)
            #expect(theirs.epoch > ours.epoch)

            waitFor("reported stale") { !rooms.dropped.isEmpty }
            #expect(rooms.dropped.map { $0.0 } == ["class"])
            #expect(rooms.dropped.map { $0.1 } == [RoomHome(node: b, epoch: theirs.epoch, placedNow: false)])
            #expect(a.claimedRoomCount == 0)
            // Still local a few refreshes on (the server is slow to drop it):
            // not reported again, not claimed back.
            waitForRefreshes(3, of: rooms)
            #expect(rooms.dropped.count == 1 && a.staleDropCount == 1)
            rooms.set([])
            waitForRefreshes(3, of: rooms)
            #expect(try storedHome(other.connection, "class") == .home(node: b, epoch: theirs.epoch))
            #expect(a.releaseCount == 0)
        }
    }
}
