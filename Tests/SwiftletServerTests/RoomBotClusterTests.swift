import Foundation
import Testing
import Wire

@testable import RoomBot

#if canImport(Glibc)
    import Glibc
#endif

/// roombot for a cluster (issue #15): several `--url`s share the bots
/// round robin and the summary reports per URL.
@Suite struct RoomBotClusterOptionsTests {
    private func parse(_ line: String) throws(BotOptions.Invalid) -> BotOptions {
        try BotOptions.parse(line.split(separator: " ").map(String.init))
    }

    private func invalid(_ line: String) -> String? {
        do {
            _ = try parse(line)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func urlsRepeatedOrListedAreSpreadRoundRobin() throws {
        let repeated = try parse("--url ws://10.0.0.1:7880/rtc --url wss://node-2.example:443/x --room r --dev --insecure")
        #expect(repeated.servers.map(\.text) == ["ws://10.0.0.1:7880/rtc", "wss://node-2.example:443/x"])
        #expect(
            repeated.servers[1].secure && repeated.servers[1].path == "/x" && repeated.servers[1].hostHeader == "node-2.example")
        #expect(repeated.servers[0].hostHeader == "10.0.0.1:7880")
        #expect(repeated.secure && repeated.insecure)
        let listed = try parse("--url ws://a:1,ws://b:2,ws://[::1]:3 --rooms 2 --publishers 1 --subscribers 2 --dev")
        #expect(listed.servers.map(\.host) == ["a", "b", "::1"])
        #expect(listed.servers[2].hostHeader == "[::1]:3")
        // Publishers and subscribers alike, by start order.
        #expect(listed.plan.indices.map { listed.serverIndex(ofBot: $0) } == [0, 1, 2, 0, 1, 2])
        #expect(listed.plan.map(\.role) == [.publisher, .subscriber, .subscriber, .publisher, .subscriber, .subscriber])
    }

    @Test func badURLListsAreRefused() {
        #expect(invalid("--url ws://a:1 --url ws://a:1 --room r --dev") == "--url ws://a:1 is given twice")
        #expect(invalid("--url ws://a:1,,ws://b:2 --room r --dev")?.hasPrefix("--url must start with ws://") == true)
        #expect(invalid("--url ws://a:1,ftp://b --room r --dev")?.hasPrefix("--url must start with ws://") == true)
        #expect(invalid("--url ws://a:1,ws://b:0 --room r --dev") == "--url has a bad port '0'")
        let many = (1...65).map { "ws://10.0.0.\($0):1" }.joined(separator: ",")
        #expect(invalid("--url \(many) --room r --dev") == "--url: at most 64 URLs")
        // TLS options need at least one TLS URL.
        #expect(
            invalid("--url ws://a:1,ws://b:2 --room r --dev --insecure")
                == "--ca-file and --insecure apply to wss:// and https:// URLs only")
        #expect(BotOptions.usage.contains("URL i mod N"))
    }

    private func record(_ role: BotRole, _ identity: String, server: Int) -> BotRecord {
        let r = BotRecord(role: role, room: "r", identity: identity, serverIndex: server)
        r.startedAt = .zero
        r.joinedAt = Instant.zero + .milliseconds(100)
        r.publisherConnectedAt = Instant.zero + .milliseconds(200)
        return r
    }

    @Test func severalURLsAddARowPerURLAndOneURLPrintsNone() throws {
        let two = try parse("--url ws://127.0.0.1:1/rtc --url ws://127.0.0.2:1/rtc --room r --dev --subscribers 0")
        let records = [
            record(.publisher, "p-1", server: 0), record(.publisher, "p-2", server: 1),
            record(.publisher, "p-3", server: 0),
        ]
        records[2].error("socket")
        let end = Instant.zero + .seconds(1)
        let report = BotReport(records: records, options: two, end: end, durationSeconds: 1, interrupted: false)
        #expect(report.byServer.map(\.name) == ["url-1", "url-2"])
        #expect(report.byServer.map(\.bots) == [2, 1])
        #expect(report.byServer.map { $0.errors["socket"] ?? 0 } == [1, 0])
        let table = report.table
        #expect(table.contains("per URL:"))
        #expect(table.contains("  url-2: ws://127.0.0.2:1/rtc, 0 packets received, 0 sent"), "\(table)")
        #expect(table.split(separator: "\n").allSatisfy { $0.count <= BotReport.width }, "\(table)")
        let json = report.json(two)
        let byURL = try #require(json["byURL"] as? [[String: Any]])
        #expect(byURL.map { $0["url"] as? String } == ["ws://127.0.0.1:1/rtc", "ws://127.0.0.2:1/rtc"])
        #expect(byURL.map { $0["bots"] as? Int } == [2, 1])
        #expect(report.bots.map(\.url) == ["ws://127.0.0.1:1/rtc", "ws://127.0.0.2:1/rtc", "ws://127.0.0.1:1/rtc"])

        // One URL: the same records print no per-URL lines.
        let one = try parse("--url ws://127.0.0.1:1/rtc --room r --dev --subscribers 0")
        let single = [record(.publisher, "p-1", server: 0), record(.publisher, "p-2", server: 0)]
        let plain = BotReport(records: single, options: one, end: end, durationSeconds: 1, interrupted: false)
        #expect(plain.byServer.isEmpty)
        #expect(!plain.table.contains("per URL"))
        #expect(plain.json(one)["byURL"] == nil && plain.json(one)["url"] as? String == "ws://127.0.0.1:1/rtc")
    }
}

/// The real roombot against real servers on loopback.
@Suite struct RoomBotClusterProcessTests {
    private let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache").path

    private func stop(_ server: Process) {
        if server.isRunning {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
    }

    private func jsonReport(_ path: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any])
    }

    /// Two separate dev servers, four publishers in four rooms: bots 1 and
    /// 3 go to the first URL, 2 and 4 to the second; each server counts
    /// its two participants, and the summary has a row per URL. (Separate
    /// servers relay nothing to each other, so each bot is alone in its
    /// room: what is checked is the spread, the joins and what each sent.)
    @Test(.timeLimit(.minutes(1)))
    func twoURLsShareTheBotsAndTheReportSplitsThem() throws {
        let (a, _, urlA) = try startDevServer()
        defer { stop(a) }
        let (b, _, urlB) = try startDevServer()
        defer { stop(b) }
        try #require(urlA.hasPrefix("ws://") && urlB.hasPrefix("ws://") && urlA != urlB)
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let bot = try RoomBotFailureTests.BotProcess([
            "--url", urlA, "--url", urlB, "--rooms", "4", "--publishers", "1", "--subscribers", "0", "--audio-only",
            "--dev", "--duration", "5", "--ramp", "20", "--cache-dir", cache, "--json", json.path,
        ])
        #expect(bot.wait(for: "4 connected", seconds: 20), "\(bot.output)")
        let participantsA = try serverMetrics(urlA)["swiftlet_participants"]
        let participantsB = try serverMetrics(urlB)["swiftlet_participants"]
        let status = bot.finish(within: 30)
        #expect(status == 0, "\(bot.output)")
        #expect(
            participantsA == 2 && participantsB == 2, "\(String(describing: participantsA)) \(String(describing: participantsB))")
        #expect(bot.output.contains("per URL:"), "\(bot.output)")
        #expect(bot.output.contains("  url-1: \(urlA), "), "\(bot.output)")
        #expect(bot.output.contains("  url-2: \(urlB), "), "\(bot.output)")

        let report = try jsonReport(json)
        #expect(report["urls"] as? [String] == [urlA, urlB])
        let byURL = try #require(report["byURL"] as? [[String: Any]])
        #expect(byURL.count == 2)
        for (entry, url) in zip(byURL, [urlA, urlB]) {
            #expect(entry["url"] as? String == url)
            #expect(entry["bots"] as? Int == 2 && entry["joined"] as? Int == 2, "\(entry)")
            #expect(entry["transportsConnected"] as? Int == 2, "\(entry)")
            #expect((entry["packetsSent"] as? Int ?? 0) > 0, "\(entry)")
            #expect((entry["errors"] as? [String: Int])?.isEmpty == true, "\(entry)")
        }
        let bots = try #require(report["bots"] as? [[String: Any]])
        #expect(bots.map { $0["url"] as? String } == [urlA, urlB, urlA, urlB])
    }
}
