import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// roombot must never pass a broken run (issue #11): the real roombot
/// against the real dev server, broken on purpose mid-run. Each run is a
/// few seconds and bounded: a roombot that outlives its limit is killed
/// and the test fails.
@Suite struct RoomBotFailureTests {
    /// A roombot process whose output is read as it comes.
    final class BotProcess {
        let process = Process()
        private let pipe = Pipe()
        private(set) var output = ""
        let started = Date()

        /// `namespace`: run inside that network namespace (`ip netns exec`,
        /// which execs roombot: the pid is roombot's).
        init(_ arguments: [String], namespace: String? = nil) throws {
            if let namespace {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["ip", "netns", "exec", namespace, builtProduct("roombot").path] + arguments
            } else {
                process.executableURL = builtProduct("roombot")
                process.arguments = arguments
            }
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
        }

        /// Reads until the output contains `text` (true) or `seconds` pass
        /// or the output ends (false). Progress lines come every second.
        /// `offset`: only output after its first `offset` UTF-8 bytes counts.
        func wait(for text: String, seconds: Double, after offset: Int = 0) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            func found() -> Bool { String(decoding: output.utf8.dropFirst(offset), as: UTF8.self).contains(text) }
            while !found(), Date() < deadline {
                let chunk = pipe.fileHandleForReading.availableData
                if chunk.isEmpty { return false }
                output += String(decoding: chunk, as: UTF8.self)
            }
            return found()
        }

        /// The exit status after reading the rest; killed after `seconds`.
        func finish(within seconds: Double) -> Int32 {
            let watchdog = DispatchWorkItem { [process] in if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: watchdog)
            output += String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            watchdog.cancel()
            return process.terminationStatus
        }

        /// The last progress line printed.
        var lastProgress: String { output.split(separator: "\n").last { $0.hasPrefix("[") }.map(String.init) ?? "" }
    }

    private let cache = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-roombot-test-cache").path

    private func stop(_ server: Process) {
        if server.isRunning {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
    }

    /// One publisher (audio and one VP8 stream) and one subscriber; the
    /// server is killed once the subscriber receives both tracks.
    @Test func serverKilledMidRunFailsWithSignallingClosedAndFreezes() throws {
        let (server, _, url) = try startDevServer()
        defer { stop(server) }
        try #require(url.hasPrefix("ws://"))
        let bot = try BotProcess([
            "--url", url, "--room", "kill", "--dev", "--no-simulcast", "--duration", "8", "--cache-dir", cache,
        ])
        #expect(bot.wait(for: "2 flowing", seconds: 15), "\(bot.output)")
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        let status = bot.finish(within: 30)
        #expect(status == 2, "\(bot.output)")
        #expect(bot.output.contains("signaling_closed x2"), "\(bot.output)")
        #expect(bot.output.contains("> --max-freeze 1.5 s"), "\(bot.output)")
        #expect(bot.output.contains("still frozen at the end"), "\(bot.output)")
        // The live line says what is true now: nobody connected, nothing flows.
        #expect(bot.lastProgress.contains("0 connected, tracks 2 announced 0 flowing, 0.00 Mbps"), "\(bot.lastProgress)")
    }

    /// SIGTERM makes the server drain; whatever it does then (close the
    /// WebSocket, a `going-away` message, stop media at the deadline),
    /// the run is broken and roombot must say so.
    @Test func serverDrainedMidRunFailsTheRunWithAReason() throws {
        let (server, _, url) = try startDevServer(["--drain-seconds", "1"])
        defer { stop(server) }
        try #require(url.hasPrefix("ws://"))
        let bot = try BotProcess([
            "--url", url, "--room", "drain", "--dev", "--audio-only", "--duration", "7", "--cache-dir", cache,
        ])
        #expect(bot.wait(for: "1 flowing", seconds: 15), "\(bot.output)")
        kill(server.processIdentifier, SIGTERM)
        let status = bot.finish(within: 30)
        #expect(status == 2, "\(bot.output)")
        #expect(
            bot.output.contains("signaling_closed") || bot.output.contains("going_away"), "\(bot.output)")
    }

    /// A publisher in its own process is frozen (SIGSTOP): the subscriber's
    /// run fails on the freeze of that track, though its own connections
    /// are fine.
    @Test func publisherStoppedMidRunFailsTheSubscriberOnAFreeze() throws {
        let (server, _, url) = try startDevServer()
        defer { stop(server) }
        try #require(url.hasPrefix("ws://"))
        let publisher = try BotProcess([
            "--url", url, "--room", "stop", "--dev", "--audio-only", "--publishers", "1", "--subscribers", "0",
            "--duration", "20", "--cache-dir", cache,
        ])
        defer {
            kill(publisher.process.processIdentifier, SIGKILL)
            publisher.process.waitUntilExit()
        }
        #expect(publisher.wait(for: "1 connected", seconds: 15), "\(publisher.output)")
        let subscriber = try BotProcess([
            "--url", url, "--room", "stop", "--dev", "--audio-only", "--publishers", "0", "--subscribers", "1",
            "--duration", "6", "--cache-dir", cache,
        ])
        #expect(subscriber.wait(for: "1 flowing", seconds: 15), "\(subscriber.output)")
        kill(publisher.process.processIdentifier, SIGSTOP)
        let status = subscriber.finish(within: 30)
        #expect(status == 1, "\(subscriber.output)")
        #expect(subscriber.output.contains("> --max-freeze 1.5 s on roombot-"), "\(subscriber.output)")
        #expect(subscriber.output.contains("audio track"), "\(subscriber.output)")
    }

    @Test func serverDownReportsTheErrnoAtOnceAndGivesUpAtTheDeadline() throws {
        // Port 9 (discard) has no listener on loopback.
        let bot = try BotProcess([
            "--url", "ws://127.0.0.1:9/rtc", "--room", "r", "--dev", "--no-media", "--duration", "30",
            "--connect-timeout", "2",
        ])
        #expect(bot.wait(for: "Connection refused; retrying until 2.0 s", seconds: 5), "\(bot.output)")
        let status = bot.finish(within: 20)
        #expect(status == 2, "\(bot.output)")
        #expect(bot.output.contains("connect x2 ("), "\(bot.output)")
        #expect(bot.output.contains("connect 127.0.0.1:9: Connection refused ("), "\(bot.output)")
        // All bots gave up at the deadline: the run ends then, not at 30 s.
        #expect(Date().timeIntervalSince(bot.started) < 10)
    }

    @Test func wrongPathReportsTheHTTPStatus() throws {
        let (server, _, url) = try startDevServer()
        defer { stop(server) }
        try #require(url.hasSuffix("/rtc"))
        let bot = try BotProcess([
            "--url", String(url.dropLast(4)) + "/xyz", "--room", "r", "--dev", "--no-media", "--publishers", "1",
            "--subscribers", "0", "--duration", "20",
        ])
        let status = bot.finish(within: 20)
        #expect(status == 2, "\(bot.output)")
        #expect(bot.output.contains("handshake x1 (roombot-"), "\(bot.output)")
        #expect(bot.output.contains("HTTP 404 on /xyz"), "\(bot.output)")
        #expect(Date().timeIntervalSince(bot.started) < 10)
    }

    @Test func sigintPrintsTheSummaryAndExits130() throws {
        let (server, _, url) = try startDevServer()
        defer { stop(server) }
        try #require(url.hasPrefix("ws://"))
        let bot = try BotProcess(["--url", url, "--room", "int", "--dev", "--no-media", "--duration", "30"])
        #expect(bot.wait(for: "2 connected", seconds: 15), "\(bot.output)")
        kill(bot.process.processIdentifier, SIGINT)
        let status = bot.finish(within: 20)
        #expect(status == 130, "\(bot.output)")
        #expect(bot.output.contains("roombot summary after"), "\(bot.output)")
        #expect(bot.output.contains("roombot: cut short by signal 2"), "\(bot.output)")
    }
}

extension RoomBotFailureTests {
    /// A server that takes the TCP connection and never answers the upgrade:
    /// the bot gives up at --connect-timeout instead of waiting for ever.
    @Test func silentServerTimesOutAtTheConnectDeadline() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound && listen(fd, 8) == 0)
        // Listening but never accepting: the kernel completes the handshake.
        let port = UInt16(bigEndian: address.sin_port)
        let bot = try BotProcess([
            "--url", "ws://127.0.0.1:\(port)/rtc", "--room", "r", "--dev", "--no-media", "--duration", "30",
            "--connect-timeout", "1.5",
        ])
        let status = bot.finish(within: 20)
        #expect(status == 2, "\(bot.output)")
        #expect(bot.output.contains("no WebSocket upgrade within 1.5 s"), "\(bot.output)")
        #expect(Date().timeIntervalSince(bot.started) < 10)
    }
}
