import Foundation
import Testing

@testable import RoomBot

/// roombot `--data-rate` through the real dev server: three audio-only
/// participants each send ten data channel messages a second to the room
/// over their publisher transport; the report has what was sent, what
/// arrived (relayed with the sender's identity), the delivery ratio and
/// the latency.
extension RoomBotMediaTests {
    @Test func dataRateReportsDeliveryAndLatency() throws {
        let (server, _, url) = try startDevServer()
        defer { server.terminate() }
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-data-\(getpid()).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        bot.arguments = [
            "--url", url, "--room", "ci-data", "--dev", "--participants", "3", "--audio-only", "--data-rate", "10",
            "--duration", "4", "--json", json.path,
        ]
        let output = Pipe()
        bot.standardOutput = output
        bot.standardError = output
        try bot.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bot.waitUntilExit()
        #expect(bot.terminationStatus == 0, "roombot output:\n\(text)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let overall = try #require((summary["groups"] as? [String: Any])?["overall"] as? [String: Any], "\(text)")
        let sent = try #require(overall["dataSent"] as? Int)
        // Three bots at 10 a second for about 4 s, less the time to connect.
        #expect(sent >= 75, "\(text)")
        // Messages still in flight when the run stops count as lost.
        #expect((overall["dataDeliveryRatio"] as? Double ?? 0) >= 0.9, "\(text)")
        let latency = try #require(overall["dataLatencyMs"] as? [String: Any])
        #expect((latency["p50"] as? Double ?? 1e9) < 100, "\(text)")
        #expect(text.contains("data \(sent) sent/"), "\(text)")
    }
}
