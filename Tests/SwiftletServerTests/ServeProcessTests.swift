import Foundation
import Testing

/// The real binary: starts, binds its media workers, and stops with exit
/// status 0 on SIGTERM.
@Suite struct ServeProcessTests {
    private var binary: URL {
        // The test bundle lives next to the products of the same build.
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("swiftlet")
    }

    @Test func startsAndStopsCleanlyOnSIGTERM() throws {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--dev", "--udp-port", "0", "--workers", "2", "--http", "127.0.0.1:0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // Wait (bounded) for the line saying how to stop it: workers are up.
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("stop with Ctrl-C"), Date() < deadline, process.isRunning {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(text.contains("media worker on udp 127.0.0.1:"))
        #expect(text.contains("room WebSocket   ws://127.0.0.1:"))
        #expect(text.components(separatedBy: "media worker on udp").count == 3)
        // The effective configuration, with sources; no stale claims.
        #expect(text.contains("workers") && text.contains("2  (flag)"))
        #expect(text.contains("devkey=<redacted>") && !text.lowercased().contains("not built"))
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(text.contains("swiftlet: stopped"))
    }

    @Test func refusesToStartWithoutKeysOutsideDevMode() throws {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--udp-port", "0", "--http", "127.0.0.1:0"]
        process.environment = [:]
        let output = Pipe()
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 64)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.contains("SWIFTLET_API_KEY"))
    }

    /// Runs `swiftlet ARGS` to its end (bounded: these never start a server).
    private func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        )
    }

    @Test func aBadConfigFileExits64WithWhereAndWhat() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-bad-\(getpid()).json").path
        try Data("{\n  \"udpport\": 18000,\n  \"workers\": 2\n}\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (status, _, err) = try run(["serve", "--dev", "--config", path])
        #expect(status == 64)
        #expect(err.contains("\(path):2:3: unknown key 'udpport'; did you mean 'udpPort'?"), "\(err)")
        try Data("{\"workers\": 2 \"dev\": true}".utf8).write(to: URL(fileURLWithPath: path))
        let (status2, _, err2) = try run(["serve", "--config=\(path)"])
        #expect(status2 == 64)
        #expect(err2.contains("\(path):1:15: expected ',' or '}'"), "\(err2)")
    }

    @Test func everyCommandHasItsHelpAndTheVersionPrints() throws {
        let (status, serve, _) = try run(["serve", "--help"])
        #expect(status == 0)
        #expect(serve.contains("--udp-port PORT") && serve.contains("SWIFTLET_UDP_PORT") && serve.contains("(default: 10000)"))
        #expect(try run(["help", "serve"]).1 == serve)
        let (tokenStatus, token, _) = try run(["token", "--help"])
        #expect(tokenStatus == 0 && token.contains("--ttl DURATION") && !token.contains("--udp-port"))
        #expect(try run(["help", "token"]).1 == token)
        #expect(try run(["--version"]).1.hasPrefix("swiftlet "))
        #expect(try run(["version"]).1.hasPrefix("swiftlet "))
        let (unknown, _, err) = try run(["serv"])
        #expect(unknown == 64 && err.contains("did you mean 'serve'?"))
        let (badHelp, _, helpErr) = try run(["help", "frob"])
        #expect(badHelp == 64 && helpErr.contains("the commands are serve, token"))
        let (weak, _, weakErr) = try run(["token", "--room", "r", "--identity", "i", "--key", "k", "--secret", "short"])
        #expect(weak == 64 && weakErr.contains("16 bytes"))
    }
}
