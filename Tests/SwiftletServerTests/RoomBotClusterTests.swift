import DTLS
import Foundation
import HTTPClient
import Signaling
import Testing
import Wire

@testable import RoomBot

#if canImport(Glibc)
    import Glibc
#endif

/// roombot for a cluster (issue #15): several `--url`s share the bots
/// round robin and the summary reports per URL; a room WebSocket that
/// drops is opened again and the server resumes the participant.
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

    private func record(_ role: BotRole, _ identity: String, server: Int, reconnects: Int = 0) -> BotRecord {
        let r = BotRecord(role: role, room: "r", identity: identity, serverIndex: server)
        r.startedAt = .zero
        r.joinedAt = Instant.zero + .milliseconds(100)
        r.publisherConnectedAt = Instant.zero + .milliseconds(200)
        r.reconnects = reconnects
        return r
    }

    @Test func severalURLsAddARowPerURLAndOneURLPrintsNone() throws {
        let two = try parse("--url ws://127.0.0.1:1/rtc --url ws://127.0.0.2:1/rtc --room r --dev --subscribers 0")
        let records = [
            record(.publisher, "p-1", server: 0), record(.publisher, "p-2", server: 1, reconnects: 2),
            record(.publisher, "p-3", server: 0),
        ]
        records[2].error("socket")
        let end = Instant.zero + .seconds(1)
        let report = BotReport(records: records, options: two, end: end, durationSeconds: 1, interrupted: false)
        #expect(report.byServer.map(\.name) == ["url-1", "url-2"])
        #expect(report.byServer.map(\.bots) == [2, 1])
        #expect(report.byServer.map(\.reconnects) == [0, 2])
        #expect(report.byServer.map { $0.errors["socket"] ?? 0 } == [1, 0])
        #expect(report.overall.reconnects == 2)
        let table = report.table
        #expect(table.contains("per URL:"))
        #expect(table.contains("  url-2: ws://127.0.0.2:1/rtc, 0 packets received, 0 sent, reconnects 2"), "\(table)")
        #expect(table.contains("reconnects 2"))
        #expect(table.split(separator: "\n").allSatisfy { $0.count <= BotReport.width }, "\(table)")
        let json = report.json(two)
        let byURL = try #require(json["byURL"] as? [[String: Any]])
        #expect(byURL.map { $0["url"] as? String } == ["ws://127.0.0.1:1/rtc", "ws://127.0.0.2:1/rtc"])
        #expect(byURL.map { $0["bots"] as? Int } == [2, 1])
        #expect(byURL.map { $0["reconnects"] as? Int } == [0, 2])
        #expect(report.bots.map(\.url) == ["ws://127.0.0.1:1/rtc", "ws://127.0.0.2:1/rtc", "ws://127.0.0.1:1/rtc"])

        // One URL: the same records print no per-URL lines and no
        // reconnect figure while there was none.
        let one = try parse("--url ws://127.0.0.1:1/rtc --room r --dev --subscribers 0")
        let single = [record(.publisher, "p-1", server: 0), record(.publisher, "p-2", server: 0)]
        let plain = BotReport(records: single, options: one, end: end, durationSeconds: 1, interrupted: false)
        #expect(plain.byServer.isEmpty)
        #expect(!plain.table.contains("per URL") && !plain.table.contains("reconnects"))
        #expect(plain.json(one)["byURL"] == nil && plain.json(one)["url"] as? String == "ws://127.0.0.1:1/rtc")
    }
}

/// When a bot reconnects its room WebSocket and when it gives up: its
/// decisions on a virtual clock (no socket is opened: the attempts are
/// fed as their failures).
@Suite struct RoomBotReconnectTests {
    private func bot(_ extra: String = "") throws -> Bot {
        let options = try BotOptions.parse(
            ("--url ws://127.0.0.1:1/rtc --room r --dev --connect-timeout 3 " + extra).split(separator: " ").map(String.init))
        let context = BotContext(
            servers: [], options: options,
            certificate: try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970)), media: NoMedia())
        let bot = Bot(record: BotRecord(role: .subscriber, room: "r", identity: "s-1"), context: context)
        bot.record.startedAt = .zero
        bot.opened = true
        bot.record.joinedAt = Instant.zero + .milliseconds(10)
        return bot
    }

    private let t0 = Instant.zero + .seconds(5)

    @Test func aDroppedWebSocketIsRetriedWithBackoffUntilTheConnectTimeout() throws {
        let b = try bot()
        b.signalingClosed(ClientStream.peerClosed, code: nil, now: t0)
        #expect(b.reconnection?.since == t0 && b.record.errors.isEmpty)
        #expect(b.reconnectAt == t0 + .milliseconds(250))
        #expect(b.connectDeadline == t0 + .seconds(3))
        // Each failed attempt waits twice as long, up to 2 s.
        var now = t0 + .milliseconds(250)
        for wait in [500, 1000] {
            b.signalingClosed("connect 127.0.0.1:1: Connection refused", code: nil, now: now)
            #expect(b.reconnectAt == now + .milliseconds(wait), "\(wait)")
            now = now + .milliseconds(wait)
        }
        #expect(b.record.errors.isEmpty && b.reconnection?.attempts == 2)
        // The next wait (2 s) would pass the deadline: given up, counted as
        // the drop it was.
        b.signalingClosed("connect 127.0.0.1:1: Connection refused", code: nil, now: now)
        #expect(b.reconnection == nil && b.reconnectAt == nil)
        #expect(b.record.errors == ["signaling_closed": 1])
        let detail = try #require(b.record.errorDetails["signaling_closed"])
        #expect(detail.hasPrefix("server closed the connection; not joined again by the deadline (3 failed attempts"))
        #expect(detail.hasSuffix("last: connect 127.0.0.1:1: Connection refused)"))
        #expect(b.record.reconnects == 0)
    }

    @Test func anAttemptInFlightAtTheDeadlineIsDropped() throws {
        let b = try bot()
        b.signalingClosed("websocket closed 1001 no traffic", code: .goingAway, now: t0)
        b.checkConnectDeadline(now: t0 + .milliseconds(2999))
        #expect(b.reconnection != nil)
        b.checkConnectDeadline(now: t0 + .seconds(3))
        #expect(b.reconnection == nil && b.record.errors == ["signaling_closed": 1])
    }

    @Test func drainPolicyCloseAndHTTPAnswersAreNotRetried() throws {
        let drained = try bot()
        drained.drainAnnounced = true
        drained.signalingClosed("websocket closed 1001 server shutting down", code: .goingAway, now: t0)
        #expect(drained.reconnection == nil && drained.record.errors == ["signaling_closed": 1])

        let replaced = try bot()
        replaced.signalingClosed("websocket closed 1008 replaced", code: .policyViolation, now: t0)
        #expect(replaced.reconnection == nil && replaced.record.errors == ["signaling_closed": 1])

        let refused = try bot()
        refused.signalingClosed(ClientStream.peerClosed, code: nil, now: t0)
        refused.signalingClosed("HTTP 503 on /rtc", code: nil, now: t0 + .milliseconds(250))
        #expect(refused.reconnection == nil && refused.record.errors == ["signaling_closed": 1])
        #expect(refused.record.errorDetails["signaling_closed"]?.contains("last: HTTP 503 on /rtc") == true)

        // A close the bot started (the run's end) is no drop at all.
        let leaving = try bot()
        leaving.leave(now: t0)
        leaving.signalingClosed("websocket closed 1001 roombot done", code: .goingAway, now: t0)
        #expect(leaving.reconnection == nil && leaving.record.errors.isEmpty)
    }

    @Test func aResumeCountsAReconnectAndAFreshJoinARejoin() throws {
        let resumed = try bot()
        resumed.signalingClosed(ClientStream.peerClosed, code: nil, now: t0)
        resumed.rejoined(resumed: true, now: t0 + .milliseconds(300))
        #expect(resumed.reconnection == nil && resumed.record.reconnects == 1 && resumed.record.errors.isEmpty)
        #expect(resumed.connectDeadline == nil)

        // A new participant (RoomBotRejoinTests): no error, and a later
        // drop is reconnected as any.
        let fresh = try bot()
        fresh.signalingClosed(ClientStream.peerClosed, code: nil, now: t0)
        fresh.rejoined(resumed: false, now: t0 + .milliseconds(300))
        #expect(fresh.record.reconnects == 0 && fresh.record.rejoins == 1 && fresh.record.errors.isEmpty)
        fresh.signalingClosed(ClientStream.peerClosed, code: nil, now: t0 + .seconds(1))
        #expect(fresh.reconnection?.since == t0 + .seconds(1) && fresh.record.errors.isEmpty)
    }

    @Test func stillReconnectingWhenTheRunEndsCountsTheDrop() throws {
        let b = try bot()
        b.signalingClosed(ClientStream.peerClosed, code: nil, now: t0)
        b.leave(now: t0 + .milliseconds(100))
        #expect(b.record.errors == ["signaling_closed": 1])
        #expect(b.record.errorDetails["signaling_closed"]?.contains("not joined again by the end of the run") == true)
    }
}

extension ClusterProcessSuite {
    /// The real roombot against real servers on loopback.
    @Suite struct RoomBotClusterProcessTests {
        private let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache").path

        private func stop(_ server: Process) {
            if server.isRunning {
                kill(server.processIdentifier, SIGKILL)
                server.waitUntilExit()
            }
        }

        private func port(of url: String) -> UInt16? {
            // ws://127.0.0.1:PORT/rtc
            url.split(separator: ":").last.flatMap { UInt16($0.prefix { $0.isNumber }) }
        }

        static let apiKey = "roombot-test"
        static let apiSecret = "0123456789abcdef0123456789abcdef"

        /// `swiftlet serve` on loopback without `--dev`: a dev server refuses a
        /// `Host` that is not its own listener (DNS rebinding protection, 421),
        /// and a proxy's port is not. One API key from the environment.
        private func startKeyedServer() throws -> (Process, OutputReader, String) {
            let process = Process()
            process.executableURL = builtProduct("swiftlet")
            process.arguments = [
                "serve", "--udp-port", "0", "--workers", "1", "--http", "127.0.0.1:0", "--media-bind", "127.0.0.1",
            ]
            let (output, url) = try runKeyedServer(process, key: Self.apiKey, secret: Self.apiSecret)
            return (process, output, url)
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
                participantsA == 2 && participantsB == 2,
                "\(String(describing: participantsA)) \(String(describing: participantsB))")
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

        /// The bots' room WebSockets go through a proxy that the test cuts
        /// (both sides closed, no close frame: a network blip). Each bot opens
        /// its WebSocket again through the proxy and joins with the same
        /// identity; the server resumes it, and media, which never went
        /// through the proxy, keeps flowing: the run passes its freeze check
        /// (a track silent from the cut to the end would fail it).
        @Test(.timeLimit(.minutes(1)))
        func droppedWebSocketsResumeAndMediaKeepsFlowing() throws {
            let (server, serverOutput, url) = try startKeyedServer()
            defer { stop(server) }
            let upstream = try #require(port(of: url))
            let proxy = try CuttableTCPProxy(upstreamPort: upstream, lifetime: 50)
            defer { proxy.stop() }
            let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: json) }
            let bot = try RoomBotFailureTests.BotProcess([
                "--url", "ws://127.0.0.1:\(proxy.port)/rtc", "--room", "blip", "--key", Self.apiKey, "--secret", Self.apiSecret,
                "--audio-only", "--duration", "8",
                "--cache-dir", cache, "--json", json.path,
            ])
            #expect(bot.wait(for: "1 flowing", seconds: 20), "\(bot.output)")
            // The bots' two WebSockets, and roombot's reachability probe at
            // start (`ServerEndpoint.firstReachable`, closed at once).
            let before = proxy.counts.carried
            #expect(before == 3)
            proxy.cut()
            #expect(bot.wait(for: "joined again (resumed)", seconds: 10), "\(bot.output)")
            // After the rejoin: a progress line with the track flowing.
            #expect(bot.wait(for: "1 flowing", seconds: 5, after: bot.output.utf8.count), "\(bot.output)")
            let status = bot.finish(within: 30)
            #expect(status == 0, "\(bot.output)")
            #expect(proxy.counts.cut == 2 && proxy.counts.carried == before + 2, "\(proxy.counts)")
            #expect(!bot.output.contains("signaling_closed"), "\(bot.output)")
            #expect(serverOutput.text.contains("resumed"), "\(serverOutput.text)")

            let report = try jsonReport(json)
            let overall = try #require((report["groups"] as? [String: Any])?["overall"] as? [String: Any])
            #expect(overall["reconnects"] as? Int == 2, "\(overall)")
            #expect((overall["errors"] as? [String: Int])?.isEmpty == true, "\(overall)")
            let bots = try #require(report["bots"] as? [[String: Any]])
            #expect(bots.map { $0["reconnects"] as? Int } == [1, 1])
            #expect(report["byURL"] == nil)
        }
    }
}
