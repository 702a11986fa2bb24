import Foundation
import Testing

/// A room over four media workers in `swiftlet serve` (issue #13): with
/// `--room-spread-after 1` every participant is placed by load, so the
/// simulcast publisher and its six subscribers sit on all four workers.
/// Every subscriber must decode with no freeze (roombot's own thresholds,
/// exit 0), and /metrics must show the packets that crossed between
/// workers and no ring drop.
@Suite(.serialized) struct RoomBotFourWorkerTests {
    @Test func aRoomSpreadOverFourWorkersDecodesEverywhere() throws {
        let (server, _, url) = try startDevServer(["--workers", "4", "--room-spread-after", "1"])
        defer { server.terminate() }
        try #require(url.hasPrefix("ws://"))
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache")
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-four-workers-\(getpid()).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        // Subscribers cycle maxLayer every 2 s: each far worker's own layer
        // choice switches the layers it gets from the relay.
        bot.arguments = [
            "--url", url, "--room", "four-workers", "--dev", "--publishers", "1", "--subscribers", "6", "--duration", "12",
            "--ramp", "20", "--cache-dir", cache.path, "--max-loss", "2", "--max-join-ms", "2000", "--max-delay-ms", "400",
            "--min-bitrate", "30", "--switch-every", "2", "--json", json.path,
        ]
        let output = Pipe()
        bot.standardOutput = output
        bot.standardError = output
        try bot.run()
        let killer = DispatchWorkItem { if bot.isRunning { bot.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: killer)
        // Mid-run: the seven participants' transports sit on all four
        // workers. Polled rather than read once at a fixed time: a cold
        // clip cache on a loaded machine delays the joins by seconds.
        let transports = (0..<4).map { "swiftlet_worker_transports{worker=\"\($0)\"}" }
        var during: [String: Double] = [:]
        let pollUntil = Date().addingTimeInterval(30)
        while bot.isRunning, Date() < pollUntil {
            during = try serverMetrics(url)
            if transports.allSatisfy({ (during[$0] ?? 0) > 0 }) { break }
            Thread.sleep(forTimeInterval: 0.25)
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bot.waitUntilExit()
        killer.cancel()
        #expect(bot.terminationStatus == 0, "roombot output:\n\(text)")
        for (w, name) in transports.enumerated() {
            #expect((during[name] ?? 0) > 0, "worker \(w): \(during)")
        }
        let counters = try serverMetrics(url)
        for w in 0..<4 {
            #expect((counters["swiftlet_worker_forwarded_packets_total{worker=\"\(w)\"}"] ?? 0) > 0, "worker \(w)")
        }
        #expect((counters["swiftlet_relay_packets_sent_total"] ?? 0) > 0, "\(counters)")
        #expect((counters["swiftlet_relay_packets_received_total"] ?? 0) > 0)
        #expect(counters["swiftlet_relay_ring_drops_total"] == 0)
        // Layer switches happened, each on a keyframe, wherever the
        // subscriber sat.
        let summary = (try? JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]) ?? [:]
        let groups = try #require(summary["groups"] as? [String: Any], "roombot output:\n\(text)")
        let subscribers = try #require(groups["subscriber"] as? [String: Any])
        #expect(subscribers["tracksFlowing"] as? Int == 12, "roombot output:\n\(text)")
        let switches = (subscribers["switchMs"] as? [String: Any])?["count"] as? Int ?? 0
        #expect(switches >= 6, "roombot output:\n\(text)")
        #expect(subscribers["switchesNotOnKeyframe"] as? Int == 0)
        print("four workers: \(switches) layer switches; \(during.filter { $0.key.hasPrefix("swiftlet_worker_") })")
    }
}
