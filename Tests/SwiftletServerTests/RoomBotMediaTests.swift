import Foundation
import Testing

/// roombot with real media against the real server, at CI scale: 2
/// publishers (three-layer VP8 simulcast and Opus), 6 subscribers, 15 s.
/// The run must meet its thresholds (exit 0), and what the bots say they
/// received must agree with what the server says it sent (/metrics).
@Suite(.serialized) struct RoomBotMediaTests {
    @Test func smallRoomMeetsThresholdsAndAgreesWithServerMetrics() throws {
        let (server, _, url) = try startDevServer()
        defer { server.terminate() }
        try #require(url.hasPrefix("ws://"))
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-media-\(getpid()).json")
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache")
        defer { try? FileManager.default.removeItem(at: json) }
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        bot.arguments = [
            "--url", url, "--room", "ci-media", "--dev", "--publishers", "2", "--subscribers", "6", "--duration", "15",
            "--ramp", "20", "--cache-dir", cache.path, "--json", json.path, "--max-loss", "2", "--max-join-ms", "2000",
            "--max-delay-ms", "400", "--min-bitrate", "30",
        ]
        let output = Pipe()
        bot.standardOutput = output
        bot.standardError = output
        try bot.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bot.waitUntilExit()
        #expect(bot.terminationStatus == 0, "roombot output:\n\(text)")

        let counters = try serverMetrics(url)
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let groups = try #require(summary["groups"] as? [String: Any])
        let subscribers = try #require(groups["subscriber"] as? [String: Any])
        let received = try #require(subscribers["packets"] as? Double)
        let retransmitted = (subscribers["retransmissionsReceived"] as? Double) ?? 0
        let sent = try #require(counters["swiftlet_rtp_packets_sent_total"], "metrics: \(counters)")
        // Tracks: 6 subscribers x 2 publishers x (audio + video).
        #expect(subscribers["tracksExpected"] as? Int == 24)
        #expect(subscribers["tracksFlowing"] as? Int == 24)
        // What the bots counted (repaired RTX included, probes and packets
        // after roombot stopped counting not) against what the server sent:
        // within 10 %, and never more than it sent.
        #expect(received + retransmitted <= sent, "bots \(received) + \(retransmitted) RTX, server \(sent)")
        #expect(received >= sent * 0.9, "bots \(received), server \(sent)")
        #expect(subscribers["switchesNotOnKeyframe"] as? Int == 0)
        #expect((subscribers["freezes"] as? Int ?? 99) <= 1)
        // A subscriber that joins mid-stream gets delta frames until its PLI
        // brings a keyframe: a few per track at start, under 2 % overall.
        let frames = subscribers["videoFramesComplete"] as? Int ?? 0
        #expect(frames > 12 * 15 * 5)
        #expect((subscribers["framesUndecodable"] as? Int ?? 99) * 50 <= frames, "subscribers: \(subscribers)")
        #expect(subscribers["audioDecodeErrors"] as? Int == 0)
        let delay = try #require(subscribers["delayMs"] as? [String: Any])
        #expect((delay["count"] as? Int ?? 0) > 100)
        let firstFrame = try #require(subscribers["firstFrameMs"] as? [String: Any])
        #expect(firstFrame["count"] as? Int == 6)
    }
}
