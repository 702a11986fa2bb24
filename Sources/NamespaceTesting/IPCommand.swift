import Foundation

/// Runs iproute2's `ip` for the namespace helpers, bounded in time.
enum IPCommand {
    /// `ip ARGS` (at most 10 s); nil on success, else what it said.
    static func run(_ arguments: [String]) -> String? {
        let (ok, text) = capture(arguments)
        return ok ? nil : text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `ip ARGS` (at most 10 s): whether it exited 0, and what it printed
    /// (both streams).
    static func capture(_ arguments: [String]) -> (ok: Bool, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ip"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do { try process.run() } catch { return (false, "\(error)") }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            return (false, "timed out")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus == 0, text)
    }
}
