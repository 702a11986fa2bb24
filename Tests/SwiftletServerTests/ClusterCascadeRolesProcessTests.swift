import Foundation
import RedisTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ClusterProcessSuite {
    /// Issue #15, test 3 as written: node B is killed with SIGKILL while it
    /// is the home of one room and holds a part of another. B's record is
    /// gone within 8 s; B's clients get media again through another node
    /// within 15 s; no room has two homes at any poll; the other parts of
    /// the cascaded room keep forwarding among themselves without a freeze.
    /// Five nodes, audio only, real processes and a real Redis on loopback
    /// (127.0.0.1 to 127.0.0.5).
    ///
    /// The construction follows the placement rules (docs/CLUSTER.md, "Room
    /// placement", "Participants of a room that spans nodes"), with nothing
    /// left to the nodes' CPU shares, which break ties in load:
    /// - A (region `here`, one participant of a room, one room) is the only
    ///   node of its region that takes rooms when room "wide"'s publisher
    ///   joins through it: B starts after, so "wide" is homed on A.
    /// - "wide"'s four subscribers, through A: the home is full, the first
    ///   new part goes to the entry node's region, B (capacity 2), the next
    ///   two to C or D (region `there`).
    /// - Room "small" (a publisher and a subscriber) through E (entry only,
    ///   region `here`): A is at its room limit, so it is homed on B.
    /// After the kill "small" is placed again on C or D (no other node of
    /// E's region takes rooms) and B's "wide" subscribers get a new part.
    @Suite(.serialized) struct ClusterCascadeRolesProcessTests {
        private let cluster = ClusterProxyProcessTests()
        private typealias Cascade = ClusterCascadeTesting

        /// The room count in a node's record, as placement reads it.
        private func roomsInRecord(_ redis: RedisServerProcess, _ id: String) -> Int? {
            let text = cluster.redisCLI(redis, ["GET", "swiftlet:node:\(id)"])
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            return (object?["load"] as? [String: Any])?["rooms"] as? Int
        }

        @Test(.timeLimit(.minutes(2)))
        func aNodeThatHomesOneRoomAndHoldsAPartOfAnotherDies() throws {
            let redis = try RedisServerProcess()
            defer { redis.stop() }
            var nodes: [String: ClusterProxyProcessTests.Node] = [:]
            defer { for n in nodes.values { n.stop() } }
            func start(_ name: String, _ ip: String, _ extra: [String]) throws -> ClusterProxyProcessTests.Node {
                let node = try cluster.start(ip, name, redis: redis, ["--workers", "1"] + extra)
                nodes[name] = node
                return node
            }
            func relaysUp(_ count: Int) -> Bool {
                nodes.values.allSatisfy { $0.metric("swiftlet_cluster_relay_links{state=\"connected\"}") == Double(count) }
            }
            let a = try start(
                "node-a", "127.0.0.1", ["--region", "here", "--room-node-capacity", "1", "--node-max-rooms", "1"])
            let c = try start("node-c", "127.0.0.3", ["--region", "there", "--room-node-capacity", "2"])
            let d = try start("node-d", "127.0.0.4", ["--region", "there", "--room-node-capacity", "2"])
            let e = try start("node-e", "127.0.0.5", ["--region", "here", "--node-max-rooms", "0"])
            #expect(cluster.wait(15) { relaysUp(3) })

            var bots: [RoomBotFailureTests.BotProcess] = []
            defer { for b in bots where b.process.isRunning { kill(b.process.processIdentifier, SIGKILL) } }
            let reports = (0..<3).map { _ in Cascade.reportPath() }
            defer { for r in reports { try? FileManager.default.removeItem(at: r) } }
            // Every bot ends at `end`: the kill comes once the construction
            // stands (about 8 s after the first bot starts), and the bots
            // run 15 s past it and a few seconds more.
            let end = Date().addingTimeInterval(30)
            func roombot(
                _ url: String, _ room: String, _ arguments: [String], report: URL
            ) throws -> RoomBotFailureTests.BotProcess {
                let duration = String(Int(end.timeIntervalSinceNow.rounded(.up)))
                let bot = try Cascade.roombot(
                    url, room: room,
                    ["--audio-only", "--connect-timeout", "20", "--duration", duration, "--json", report.path] + arguments)
                bots.append(bot)
                return bot
            }

            // "wide" is homed on A with its publisher, then B joins.
            let publisher = try roombot(
                a.url, "wide", ["--publishers", "1", "--subscribers", "0"], report: reports[0])
            let aID = try #require(Cascade.nodeID(redis, "node-a"))
            #expect(cluster.wait(10) { Cascade.identities(redis, "wide", aID)?.count == 1 }, "\(publisher.output)")
            #expect(Cascade.home(redis, "wide")["node"] == aID)
            let b = try start("node-b", "127.0.0.2", ["--region", "here", "--room-node-capacity", "2"])
            #expect(cluster.wait(15) { relaysUp(4) })
            let bID = try #require(Cascade.nodeID(redis, "node-b"))

            // Four subscribers of "wide" through A: two on B, two on C or D.
            let wide = try roombot(
                a.url, "wide", ["--publishers", "0", "--subscribers", "4", "--ramp", "2"], report: reports[1])
            #expect(wide.wait(for: " 4 flowing,", seconds: 20), "\(wide.output)")
            // "small" through E, once A's record counts its room.
            #expect(cluster.wait(5) { roomsInRecord(redis, aID) == 1 })
            let small = try roombot(
                e.url, "small", ["--publishers", "1", "--subscribers", "1", "--ramp", "2"], report: reports[2]
            )
            #expect(small.wait(for: " 1 flowing,", seconds: 15), "\(small.output)")
            // Every part written since its last change (within 250 ms).
            usleep(1_000_000)

            // The construction, from Redis.
            let wideBefore = Cascade.parts(redis, "wide")
            let smallBefore = Cascade.parts(redis, "small")
            let smallHome = Cascade.home(redis, "small")
            let far = try #require(wideBefore.keys.first { $0.hasPrefix("node-c~") || $0.hasPrefix("node-d~") }, "\(wideBefore)")
            #expect(Set(wideBefore.keys) == [aID, bID, far], "\(wideBefore)")
            #expect(wideBefore[aID]?.count == 1 && wideBefore[aID]?.first?.contains("-publisher-") == true, "\(wideBefore)")
            #expect(wideBefore[bID]?.count == 2 && wideBefore[far]?.count == 2, "\(wideBefore)")
            #expect(smallHome["node"] == bID, "\(smallHome)")
            #expect(Set(smallBefore.keys) == [bID] && smallBefore[bID]?.count == 2, "\(smallBefore)")
            let movedWide = wideBefore[bID] ?? []
            let movedSmall = smallBefore[bID] ?? []
            let smallEpoch = Int(smallHome["epoch"] ?? "") ?? 0

            let left = end.timeIntervalSinceNow
            try #require(left > 18, "the construction took until \(left) s before the bots' end")
            let killed = Date()
            b.stop()
            let survivors = [a, c, d, e]
            let (wideAt, smallAt) = (wide.output.utf8.count, small.output.utf8.count)
            var recordGoneAfter: Double?
            var homes: [String: [String]] = ["wide": [], "small": []]
            var twoHomes: [String] = []
            var wideRejoined = false
            var smallRejoined = false
            var wideAgainAfter: Double?
            var smallAgainAfter: Double?
            // Until both rooms' moved clients have media again, for at most
            // 15 s: at every poll one home per room in Redis and no more
            // rooms claimed by the live nodes than there are rooms.
            while wideAgainAfter == nil || smallAgainAfter == nil, Date().timeIntervalSince(killed) < 15 {
                for room in ["wide", "small"] {
                    let now = Cascade.home(redis, room)
                    if let node = now["node"], homes[room]?.last != node { homes[room, default: []].append(node) }
                    if now.keys.sorted() != ["epoch", "node"] { twoHomes.append("\(room): hash \(now)") }
                }
                let claimed = survivors.map { $0.metric("swiftlet_cluster_rooms_claimed") ?? 0 }
                if claimed.reduce(0, +) > 2 { twoHomes.append("rooms claimed by the live nodes: \(claimed)") }
                if recordGoneAfter == nil, cluster.redisCLI(redis, ["EXISTS", "swiftlet:node:\(bID)"]).hasPrefix("0") {
                    recordGoneAfter = Date().timeIntervalSince(killed)
                }
                if smallAgainAfter == nil {
                    if !smallRejoined {
                        smallRejoined = small.wait(for: "joined again (not resumed", seconds: 0.1, after: smallAt)
                    } else if small.wait(for: " 1 flowing,", seconds: 0.1, after: small.output.utf8.count) {
                        smallAgainAfter = Date().timeIntervalSince(killed)
                    }
                }
                if wideAgainAfter == nil {
                    if !wideRejoined {
                        wideRejoined = wide.wait(for: "joined again (not resumed", seconds: 0.1, after: wideAt)
                    } else if wide.wait(for: " 4 flowing,", seconds: 0.1, after: wide.output.utf8.count) {
                        wideAgainAfter = Date().timeIntervalSince(killed)
                    }
                }
            }
            #expect(smallAgainAfter != nil, "no media in \"small\" within 15 s of the kill: \(small.output)")
            #expect(wideAgainAfter != nil, "no media for B's \"wide\" subscribers within 15 s of the kill: \(wide.output)")
            #expect(twoHomes.isEmpty, "\(twoHomes)")
            #expect((recordGoneAfter ?? .infinity) <= 8, "record of \(bID) gone after \(String(describing: recordGoneAfter)) s")

            // "wide" kept its home; "small" was placed again on C or D with a
            // new epoch, and its clients are served there; B's "wide"
            // subscribers are on another node.
            #expect(homes["wide"] == [aID], "\(homes)")
            let smallNow = Cascade.home(redis, "small")
            let smallNode = smallNow["node"] ?? "?"
            #expect(homes["small"] == [bID, smallNode], "\(homes)")
            #expect(smallNode.hasPrefix("node-c~") || smallNode.hasPrefix("node-d~"), "\(smallNow)")
            #expect((Int(smallNow["epoch"] ?? "") ?? 0) > smallEpoch, "\(smallHome) \(smallNow)")
            let smallAfter = Cascade.parts(redis, "small")
            #expect(Set(smallAfter[smallNode] ?? []) == Set(movedSmall), "\(smallAfter)")
            let wideAfter = Cascade.parts(redis, "wide")
            let movedTo = Set(wideAfter.filter { !Set($0.value).isDisjoint(with: movedWide) }.keys)
            #expect(!movedTo.isEmpty && !movedTo.contains(bID), "\(wideAfter)")
            #expect(wideAfter[far].map(Set.init) == Set(wideBefore[far] ?? []), "\(wideAfter)")

            // Every bot ran to its end without errors; the moved ones joined
            // again once, the others never; "wide"'s other parts (A's
            // publisher to the subscribers on C or D) had no gap over 1 s.
            var stalls: [String: Double] = [:]
            var recoveries: [String: Double] = [:]
            for (bot, report) in zip(bots, reports) {
                let status = bot.finish(within: 40)
                #expect(status == 0, "\(bot.output)")
                let json = try Cascade.report(at: report)
                for s in json["longestStalls"] as? [[String: Any]] ?? [] {
                    guard let who = s["bot"] as? String else { continue }
                    stalls[who] = max(stalls[who] ?? 0, s["longestSeconds"] as? Double ?? .infinity)
                }
                for entry in json["bots"] as? [[String: Any]] ?? [] {
                    let identity = entry["identity"] as? String ?? "?"
                    let moved = movedWide.contains(identity) || movedSmall.contains(identity)
                    #expect(entry["rejoins"] as? Int == (moved ? 1 : 0), "\(identity): \(entry)")
                    if let ms = (entry["recoveryMs"] as? [Double])?.max() { recoveries[identity] = ms }
                }
            }
            // Each of B's clients: from its drop to its first frame after
            // the rejoin.
            for who in movedWide + movedSmall {
                #expect((recoveries[who] ?? .infinity) < 15_000, "\(who): \(recoveries)")
            }
            for who in wideBefore[far] ?? [] {
                #expect((stalls[who] ?? .infinity) < 1.0, "\(who) stalled: \(stalls)")
            }
            let kept = (wideBefore[far] ?? []).map { stalls[$0] ?? .infinity }.max() ?? .infinity
            func seconds(_ value: Double?) -> String { value.map { String(format: "%.1f s", $0) } ?? "-" }
            print(
                "cascade roles: killed \(seconds(killed.timeIntervalSince(publisher.started))) after the first bot started; "
                    + "\(bID) homed \"small\" (\(movedSmall.count) clients) and held a part of \"wide\" "
                    + "(\(movedWide.count) subscribers); record gone after \(seconds(recordGoneAfter)); \"small\" placed again on "
                    + "\(smallNode), media again after \(seconds(smallAgainAfter)); \"wide\"'s moved subscribers on \(movedTo.sorted()), "
                    + "media again after \(seconds(wideAgainAfter)); roombot recovery (ms) \(recoveries); "
                    + "longest gap on \(far)'s part \(String(format: "%.2f s", kept))")
        }
    }
}
