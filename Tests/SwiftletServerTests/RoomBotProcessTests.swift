import Foundation
import Testing

/// The real roombot binary against the real server: bots join over the
/// room WebSocket, connect ICE+DTLS on both transports, answer subscriber
/// offers, and report it all in the JSON summary.
@Suite struct RoomBotProcessTests {
    private func runBot(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let bot = Process()
        bot.executableURL = builtProduct("roombot")
        bot.arguments = arguments
        let output = Pipe()
        bot.standardOutput = output
        bot.standardError = output
        try bot.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        bot.waitUntilExit()
        return (bot.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func botsJoinConnectAndReportInJSON() throws {
        let (server, _, url) = try startDevServer()
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        #expect(url.hasPrefix("ws://127.0.0.1:"))
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }

        let run = try runBot([
            "--url", url, "--room", "t", "--publishers", "1", "--subscribers", "2", "--duration", "5", "--dev",
            "--json", json.path,
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("roombot summary"))
        #expect(run.output.contains("bots 3/3 joined"))

        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]
        let groups = try #require(object?["groups"] as? [String: Any])
        let overall = try #require(groups["overall"] as? [String: Any])
        #expect(overall["bots"] as? Int == 3)
        #expect(overall["joined"] as? Int == 3)
        #expect(overall["transportsConnected"] as? Int == 3)
        // One publisher with audio and video: each subscriber is offered both.
        #expect(overall["tracksExpected"] as? Int == 4)
        #expect(overall["tracksAnnounced"] as? Int == 4)
        #expect((overall["errors"] as? [String: Int])?.isEmpty == true)
        let join = try #require(overall["joinMs"] as? [String: Any])
        #expect(join["count"] as? Int == 3)
        let p50 = try #require(join["p50"] as? Double)
        #expect(p50 > 0 && p50 < 5000)
        let publisher = try #require(groups["publisher"] as? [String: Any])
        #expect(publisher["tracksPublished"] as? Int == 2)
        #expect(object?["exitStatus"] as? Int == 0)
    }

    @Test func whipPublisherAndWHEPSubscribersConnect() throws {
        let (server, _, url) = try startDevServer()
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let base = "http" + url.dropFirst(2).dropLast(4)  // ws://H:P/rtc -> http://H:P
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let run = try runBot([
            "--url", base, "--room", "w", "--publishers", "1", "--subscribers", "2", "--whip", "--whep", "--duration", "4",
            "--dev", "--json", json.path,
        ])
        #expect(run.status == 0, "\(run.output)")
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]
        #expect(object?["whip"] as? Bool == true && object?["whep"] as? Bool == true)
        let overall = try #require((object?["groups"] as? [String: Any])?["overall"] as? [String: Any])
        #expect(overall["joined"] as? Int == 3)
        #expect(overall["transportsConnected"] as? Int == 3)
        // WHEP plays the room's first publisher: audio and video per subscriber.
        #expect(overall["tracksExpected"] as? Int == 4)
        #expect(overall["tracksAnnounced"] as? Int == 4)
    }

    /// `--layout 5x5`: each subscriber asks for every video track at the
    /// 5x5 tile width, which the server logs as the subscriber's preference.
    @Test func layoutSendsTheTileWidthAsPreference() throws {
        let (server, serverOutput, url) = try startDevServer()
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache")
        let run = try runBot([
            "--url", url, "--room", "grid", "--publishers", "1", "--subscribers", "2", "--duration", "4", "--dev",
            "--layout", "5x5", "--cache-dir", cache.path,
        ])
        #expect(run.status == 0, "\(run.output)")
        server.terminate()
        server.waitUntilExit()
        _ = serverOutput.waitForExit(server, seconds: 5)
        let log = serverOutput.text
        #expect(log.components(separatedBy: "at max width 256").count - 1 == 2, "\(log.suffix(3000))")
    }

    @Test func versionPrintsTheVersion() throws {
        let run = try runBot(["--version"])
        #expect(run.status == 0)
        #expect(run.output.hasPrefix("roombot 0."))
    }

    @Test func badCommandLinesExit64AndHelpExits0() throws {
        #expect(try runBot(["--url", "ws://127.0.0.1:1/rtc", "--dev"]).status == 64)  // no room
        #expect(try runBot(["--url", "ftp://h/rtc", "--room", "r", "--dev"]).status == 64)
        #expect(try runBot(["--url", "ws://127.0.0.1:1/rtc", "--room", "r"]).status == 64)  // no key
        #expect(try runBot(["--url", "ws://127.0.0.1:1/rtc", "--room", "r", "--dev", "--ramp", "0"]).status == 64)
        let help = try runBot(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("--max-join-ms"))
    }

    @Test func anUnknownHostExits68AndIPv6LiteralsConnect() throws {
        let unknown = try runBot(["--url", "ws://no-such-host.invalid/rtc", "--room", "r", "--dev", "--no-media"])
        #expect(unknown.status == 68, "\(unknown.output)")
        #expect(unknown.output.contains("cannot resolve 'no-such-host.invalid'"), "\(unknown.output)")

        let (server, _, text) = try startDevServer(extraArguments: ["--http", "[::1]:0"])
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let line = text.split(separator: "\n").first { $0.contains("room WebSocket") } ?? ""
        let url = line.split(separator: " ").last.map(String.init) ?? ""
        #expect(url.hasPrefix("ws://[::1]:"), "\(text)")
        let run = try runBot([
            "--url", url, "--room", "v6", "--publishers", "1", "--subscribers", "0", "--duration", "1", "--dev",
            "--no-media",
        ])
        // Signalling over IPv6 joins; media stays on the server's IPv4
        // media address, out of reach of a bot bound to ::1, so only the
        // join is checked.
        #expect(run.output.contains("bots 1/1 joined"), "\(run.output)")
    }

    @Test func unreachableServerExits2WithConnectErrors() throws {
        // Port 9 (discard) has no listener on loopback.
        let run = try runBot([
            "--url", "ws://127.0.0.1:9/rtc", "--room", "r", "--publishers", "1", "--subscribers", "0", "--duration",
            "1", "--dev",
        ])
        #expect(run.status == 2, "\(run.output)")
        #expect(run.output.contains("connect=1"))
    }
}
