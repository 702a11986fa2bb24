import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `--participants` for real: roombot processes against the dev server on
/// loopback, each participant one WebSocket with a publisher and a
/// subscriber transport; serialized, as two real calls at once on two
/// cores starve each other. Runs are a few seconds and bounded (a roombot
/// that outlives its limit is killed and the test fails).
@Suite(.serialized) struct RoomBotGridProcessTests {
    typealias BotProcess = RoomBotFailureTests.BotProcess

    private let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache").path

    private func stop(_ process: Process) {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// A 3x3 call of three: each participant publishes simulcast VP8 and
    /// Opus, receives the other two's audio and video, and asks for each
    /// video at the 3x3 tile width; the run passes.
    @Test func threeParticipantGridReceivesTheOtherTwoEachAndPasses() throws {
        let (server, serverOutput, url) = try startDevServer()
        defer { stop(server) }
        try #require(url.hasPrefix("ws://"))
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-grid-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let bot = try BotProcess([
            "--url", url, "--room", "grid", "--dev", "--participants", "3", "--layout", "3x3", "--duration", "5",
            "--cache-dir", cache, "--json", json.path,
        ])
        let status = bot.finish(within: 60)
        #expect(status == 0, "\(bot.output)")
        // The live line: all three connected (both transports), 3 x 4
        // tracks flowing, and what they sent.
        #expect(bot.output.contains("bots 3/3 joined, 3 connected, tracks 12 announced 12 flowing"), "\(bot.output)")
        #expect(bot.lastProgress.contains(", sent "), "\(bot.lastProgress)")

        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        #expect(object["participantsPerRoom"] as? Int == 3 && object["layout"] as? String == "3x3")
        let bots = try #require(object["bots"] as? [[String: Any]])
        #expect(bots.count == 3)
        for b in bots {
            #expect(b["role"] as? String == "participant")
            #expect(b["connected"] as? Bool == true)
            // Sends its own audio and video ...
            #expect(b["tracksPublished"] as? Int == 2, "\(b)")
            #expect((b["sentKbps"] as? Double ?? 0) > 100, "\(b)")
            // ... and receives the other two's, never its own.
            #expect(b["tracksExpected"] as? Int == 4 && b["tracksAnnounced"] as? Int == 4, "\(b)")
            #expect(b["flowingByKind"] as? [String: Int] == ["audio": 2, "video": 2], "\(b)")
            #expect((b["receivedKbps"] as? Double ?? 0) > 100, "\(b)")
            #expect(b["errors"] as? Int == 0, "\(b)")
        }
        let group = try #require((object["groups"] as? [String: Any])?["participant"] as? [String: Any])
        #expect(group["tracksExpected"] as? Int == 12 && group["tracksFlowing"] as? Int == 12)
        #expect(group["transportsConnected"] as? Int == 3)
        #expect((group["sentMbps"] as? Double ?? 0) > 0.3)
        // No stall: exit 0 above means no track froze for longer than
        // roombot's --max-freeze (2 s), the threshold a load test applies.
        // Shorter freezes are not asserted: this runs beside the other
        // suites on two cores, where a debug build's starved receive thread
        // showed one or two sub-second freezes (1.2 s in all); the stopped
        // participant case below is the test of freeze detection.
        // Every participant asked for each of the other two videos at the
        // 3x3 tile width: 3 x 2 preferences.
        server.terminate()
        _ = serverOutput.waitForExit(server, seconds: 5)
        let log = serverOutput.text
        #expect(log.components(separatedBy: "at max width 400").count - 1 == 6, "\(log.suffix(3000))")
    }

    /// A participant in its own process is frozen (SIGSTOP) mid-call: the
    /// two participants of the other process fail on the freeze of its
    /// tracks, though their own connections are fine.
    @Test func aStoppedParticipantFailsTheOthersOnAFreeze() throws {
        let (server, _, url) = try startDevServer()
        defer { stop(server) }
        try #require(url.hasPrefix("ws://"))
        let lone = try BotProcess([
            "--url", url, "--room", "gridstop", "--dev", "--participants", "1", "--no-simulcast", "--duration", "30",
            "--cache-dir", cache,
        ])
        defer { stop(lone.process) }
        #expect(lone.wait(for: "1 connected", seconds: 15), "\(lone.output)")
        let pair = try BotProcess([
            "--url", url, "--room", "gridstop", "--dev", "--participants", "2", "--no-simulcast", "--duration", "7",
            "--cache-dir", cache,
        ])
        // Each of the pair receives the other and the lone one: 2 x 4.
        #expect(pair.wait(for: "tracks 8 announced 8 flowing", seconds: 20), "\(pair.output)")
        kill(lone.process.processIdentifier, SIGSTOP)
        let status = pair.finish(within: 40)
        #expect(status == 1, "\(pair.output)")
        // Both of the lone participant's tracks, at both of the pair.
        #expect(pair.output.contains("> --max-freeze 1.5 s on roombot-"), "\(pair.output)")
        #expect(pair.output.contains("-participant-"), "\(pair.output)")
        #expect(pair.output.contains("(still frozen at the end) and "), "\(pair.output)")
        #expect(!pair.output.contains("did not connect"), "\(pair.output)")
    }
}
