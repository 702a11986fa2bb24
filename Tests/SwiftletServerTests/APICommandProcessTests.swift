import Foundation
import Testing

/// `swiftlet rooms` and `swiftlet participants` against a running
/// `swiftlet serve --dev` (docs/API.md, "The CLI").
@Suite(.serialized) struct APICommandProcessTests {
    /// Runs `swiftlet ARGS` to its end (at most 10 s); status, stdout, stderr.
    private func swiftlet(_ arguments: [String]) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = builtProduct("swiftlet")
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        )
    }

    @Test func roomsCreateListAndCloseAgainstARunningServer() throws {
        let (server, _, rtc) = try startDevServer()
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let http = rtc.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/rtc", with: "")
        #expect(http.hasPrefix("http://127.0.0.1:"), "\(rtc)")
        let common = ["--dev", "--url", http]
        let created = try swiftlet(["rooms", "create", "standup", "--max-participants", "4", "--metadata", "m"] + common)
        #expect(created.0 == 0 && created.1.contains(#""name":"standup""#), "\(created)")
        let listed = try swiftlet(["rooms", "list"] + common)
        #expect(listed.0 == 0, "\(listed)")
        let rows = listed.1.split(separator: "\n")
        #expect(rows.first?.hasPrefix("NAME") == true && rows.contains { $0.hasPrefix("standup ") && $0.contains(" 4 ") })
        let missing = try swiftlet(["participants", "remove", "standup", "bob"] + common)
        #expect(missing.0 == 1 && missing.2.contains("404 unknown_participant"), "\(missing)")
        let closed = try swiftlet(["rooms", "close", "standup"] + common)
        #expect(closed.0 == 0, "\(closed)")
        // Not an admin of this server: the key is wrong.
        let refused = try swiftlet(
            ["rooms", "list", "--url", http, "--api-key", "devkey", "--api-secret", "not-the-dev-secret-at-all"])
        #expect(refused.0 == 1 && refused.2.contains("401 unauthorized"), "\(refused)")
        let usage = try swiftlet(["rooms", "frobnicate"] + common)
        #expect(usage.0 == 64)
    }
}
