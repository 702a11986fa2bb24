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
}
