import Foundation
import Testing

/// issue #14 against a real dev server: light subscribers count what the
/// server forwards (as decoded subscribers count it, and as /metrics
/// counts it), `--video-kbps`/`--fps` offers the asked packet rate, and
/// `--threads 2` runs bots on two loops whose results merge.
@Suite(.serialized) struct RoomBotLoadTests {
    private let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache")

    /// Runs roombot to its end (killed after 60 s); `during` runs while it
    /// is on, given its pid. Returns exit status, output and its JSON.
    private func runBot(
        _ arguments: [String], during: (Int32) throws -> Void = { _ in }
    ) throws -> (Int32, String, [String: Any]) {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent(
            "roombot-load-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        bot.arguments = arguments + ["--cache-dir", cache.path, "--json", json.path]
        let output = OutputReader()
        bot.standardOutput = output.pipe
        bot.standardError = output.pipe
        try bot.run()
        let killer = DispatchWorkItem { if bot.isRunning { bot.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: killer)
        try during(bot.processIdentifier)
        _ = output.waitForExit(bot, seconds: 60)
        killer.cancel()
        let summary = (try? JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]) ?? [:]
        return (bot.terminationStatus, output.text, summary)
    }

    /// One simulcast publisher, four subscribers of which the first decodes
    /// and three count headers (`--decode-every 4`), on two loops: no
    /// loss, every light subscriber got the packets the decoded one got
    /// (same layer forwarded to all), and together they got what the
    /// server says it forwarded.
    @Test func lightSubscribersCountWhatTheServerForwards() throws {
        let (server, _, url) = try startDevServer()
        defer { server.terminate() }
        try #require(url.hasPrefix("ws://"))
        var threadNames: [String] = []
        let (status, text, summary) = try runBot(
            [
                "--url", url, "--room", "light", "--dev", "--publishers", "1", "--subscribers", "4", "--duration", "6",
                "--ramp", "20", "--light", "--decode-every", "4", "--threads", "2", "--max-loss", "0",
            ]
        ) { pid in
            Thread.sleep(forTimeInterval: 3)
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            threadNames = tasks.compactMap {
                try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        #expect(status == 0, "roombot output:\n\(text)")
        // The second loop ran on its own thread.
        #expect(threadNames.contains("roombot-1"), "threads: \(threadNames)")
        let light = try #require(summary["light"] as? [String: Any], "roombot output:\n\(text)")
        #expect(light["headerOnlySubscribers"] as? Int == 3 && light["decodedSubscribers"] as? Int == 1)
        #expect(text.contains("light mode: 3 subscribers counted RTP headers only"))
        let bots = try #require(summary["bots"] as? [[String: Any]])
        #expect(bots.count == 5)
        let subscribers = bots.filter { $0["role"] as? String == "subscriber" }
        #expect(subscribers.map { $0["light"] as? Bool } == [false, true, true, true])
        let groups = try #require(summary["groups"] as? [String: Any])
        let group = try #require(groups["subscriber"] as? [String: Any])
        #expect(group["lost"] as? Int == 0 && group["tracksFlowing"] as? Int == 8, "roombot output:\n\(text)")
        #expect(group["nacksSent"] as? Int == 0)
        func packets(_ bot: [String: Any], _ kind: String) -> Double {
            Double((bot["packetsByKind"] as? [String: Any])?[kind] as? Int ?? 0)
        }
        let decodedVideo = packets(subscribers[0], "video")
        #expect(decodedVideo > 200, "roombot output:\n\(text)")
        for s in subscribers.dropFirst() {
            // Audio has one stream for all: light and decoded counts agree
            // up to the join times (at --ramp 20 within 150 ms, 8 packets).
            // Video differs by when each subscriber's estimate let the
            // server forward the upper layers, so only its flow is checked.
            #expect(abs(packets(s, "audio") - packets(subscribers[0], "audio")) < 30, "\(subscribers)")
            #expect(packets(s, "video") > decodedVideo / 2, "\(subscribers)")
        }
        let received = subscribers.reduce(0.0) { $0 + Double($1["packetsReceived"] as? Int ?? 0) }
        let forwarded = try serverMetrics(url)["swiftlet_forwarded_packets_total"] ?? 0
        // The server forwards a little more than arrives: what it sent
        // after roombot stopped reading (the 300 ms of its leave).
        #expect(received <= forwarded && received >= forwarded * 0.9, "received \(received), forwarded \(forwarded)")
    }

    /// `--video-kbps 4000 --fps 50` without simulcast: the server receives
    /// the packet rate that bitrate asks for (1,100-byte payloads plus the
    /// last packet of each frame, plus Opus at 50/s at most), within 10 %,
    /// measured between two /metrics reads in steady state.
    @Test func pacedClipOffersTheAskedPacketRate() throws {
        let (server, _, url) = try startDevServer()
        defer { server.terminate() }
        try #require(url.hasPrefix("ws://"))
        var rate = 0.0
        let (status, text, _) = try runBot(
            [
                "--url", url, "--room", "paced", "--dev", "--publishers", "1", "--subscribers", "0", "--no-simulcast",
                "--video-kbps", "4000", "--fps", "50", "--duration", "6",
            ]
        ) { _ in
            // The clip may be encoded first (a few seconds, once per cache).
            let end = Date().addingTimeInterval(30)
            var first = try serverMetrics(url)["swiftlet_rtp_packets_received_total"] ?? 0
            while first == 0, Date() < end {
                Thread.sleep(forTimeInterval: 0.2)
                first = try serverMetrics(url)["swiftlet_rtp_packets_received_total"] ?? 0
            }
            Thread.sleep(forTimeInterval: 1)
            let a = try serverMetrics(url)["swiftlet_rtp_packets_received_total"] ?? 0
            let t0 = Date()
            Thread.sleep(forTimeInterval: 3)
            let b = try serverMetrics(url)["swiftlet_rtp_packets_received_total"] ?? 0
            rate = (b - a) / Date().timeIntervalSince(t0)
        }
        #expect(status == 0, "roombot output:\n\(text)")
        let asked = 4_000_000.0 / 8 / 1100 + 50 / 2 + 50
        #expect(abs(rate - asked) / asked < 0.1, "server received \(rate) packets/s, asked \(asked)")
    }

    /// WHEP viewers send transport-cc feedback as a browser does, so the
    /// server's estimate for each grows and the allocator gives them the
    /// 720p layer (without feedback a bot stayed on the layer the start
    /// estimate allows, 360p, which made the saturation search of
    /// Scripts/bench measure a lighter load than browsers put on it). The
    /// light viewer, which decodes nothing, gets the same layer: as many
    /// video packets as the decoded one.
    @Test func whepViewersSendTransportFeedbackAndGetTheTopLayer() throws {
        let (server, _, url) = try startDevServer()
        defer { server.terminate() }
        try #require(url.hasPrefix("ws://"))
        let http = url.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/rtc", with: "")
        let (status, text, summary) = try runBot([
            "--url", http, "--room", "feedback", "--dev", "--whip", "--whep", "--publishers", "1", "--subscribers", "2",
            "--duration", "8", "--light", "--decode-every", "2", "--max-loss", "1",
        ])
        #expect(status == 0, "roombot output:\n\(text)")
        let bots = try #require(summary["bots"] as? [[String: Any]], "roombot output:\n\(text)")
        let subscribers = bots.filter { $0["role"] as? String == "subscriber" }
        try #require(subscribers.count == 2)
        let groups = try #require(summary["groups"] as? [String: Any])
        let group = try #require(groups["subscriber"] as? [String: Any])
        // Every 50 ms on each of two viewers for most of the run.
        #expect((group["transportFeedbackSent"] as? Int ?? 0) > 2 * 100, "roombot output:\n\(text)")
        #expect(group["videoHeights"] as? [String: Int] == ["720": 1], "roombot output:\n\(text)")
        func video(_ bot: [String: Any]) -> Double {
            Double((bot["packetsByKind"] as? [String: Any])?["video"] as? Int ?? 0)
        }
        let decoded = video(subscribers[0])
        #expect(decoded > 400, "roombot output:\n\(text)")
        #expect(video(subscribers[1]) > decoded * 0.8, "\(subscribers)")
        // The light viewer counted headers: its delay comes from the
        // abs-capture-time it read in clear. (It once decrypted every
        // packet on WHEP and had no delay samples.)
        let delay = subscribers[1]["delayMs"] as? [String: Any]
        #expect(subscribers[1]["light"] as? Bool == true && (delay?["count"] as? Int ?? 0) > 100, "\(subscribers)")
    }
}
