import Foundation

/// A product of the same build (swiftlet, roombot): the test bundle lives
/// next to them.
func builtProduct(_ name: String) -> URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
}

/// Starts `swiftlet serve --dev` on free ports with one media worker and
/// waits (at most 20 s) until it says how to stop it (`extraArguments`
/// after the defaults); returns the process, its output (read on a
/// background thread all along: a dev server logs every message, and a
/// pipe nobody empties would stop it at its next log line) and its room
/// WebSocket URL ("" if it never said).
func startDevServer(_ extraArguments: [String] = []) throws -> (Process, OutputReader, String) {
    let (process, output, text) = try startDevServer(extraArguments: extraArguments)
    let line = text.split(separator: "\n").first { $0.contains("room WebSocket") } ?? ""
    let url = line.split(separator: " ").last.map(String.init) ?? ""
    return (process, output, url)
}

/// The same with more arguments (`--tls`...); returns everything it printed
/// up to "stop with Ctrl-C".
func startDevServer(extraArguments: [String]) throws -> (Process, OutputReader, String) {
    let process = Process()
    process.executableURL = builtProduct("swiftlet")
    process.arguments = ["serve", "--dev", "--udp-port", "0", "--workers", "1", "--http", "127.0.0.1:0"] + extraArguments
    let output = OutputReader()
    process.standardOutput = output.pipe
    process.standardError = output.pipe
    try process.run()
    _ = output.wait(for: "stop with Ctrl-C", seconds: 20)
    let text = output.text
    return (process, output, text.range(of: "stop with Ctrl-C").map { String(text[..<$0.upperBound]) } ?? text)
}

/// Runs `process`, a configured `swiftlet serve` without `--dev`, with one
/// API key in its environment, and waits (at most 20 s) until it says how
/// to stop it; returns its output (read all along, as `startDevServer`'s)
/// and its room WebSocket URL ("" if it never said).
func runKeyedServer(_ process: Process, key: String, secret: String) throws -> (OutputReader, String) {
    process.environment = ProcessInfo.processInfo.environment.merging([
        "SWIFTLET_API_KEY": key, "SWIFTLET_API_SECRET": secret,
    ]) { $1 }
    let output = OutputReader()
    process.standardOutput = output.pipe
    process.standardError = output.pipe
    try process.run()
    _ = output.wait(for: "stop with Ctrl-C", seconds: 20)
    let line = output.text.split(separator: "\n").first { $0.contains("room WebSocket") } ?? ""
    return (output, line.split(separator: " ").last.map(String.init) ?? "")
}

/// A child's output, collected on a background thread so that reading it
/// never blocks the test (waits are bounded).
final class OutputReader: @unchecked Sendable {
    let pipe = Pipe()
    private let lock = NSLock()
    private var collected = ""

    init() {
        // The handler holds the reader until the output ends, so a caller
        // that drops it (`let (server, _, url) = ...`) still has the child's
        // output emptied: a child blocked on a full pipe stops answering.
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                return
            }
            self.lock.withLock { self.collected += String(decoding: data, as: UTF8.self) }
        }
    }

    var text: String { lock.withLock { collected } }

    func wait(for needle: String, seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while !text.contains(needle), Date() < end { usleep(20_000) }
        return text.contains(needle)
    }

    func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < end { usleep(20_000) }
        usleep(100_000)  // the last output
        return !process.isRunning
    }
}

/// The dev server's Prometheus counters (`/metrics`, next to the room
/// WebSocket at `wsURL`), through curl: name (with labels) to value.
/// `namespace`: curl runs inside that network namespace (`ip netns exec`).
func serverMetrics(_ wsURL: String, namespace: String? = nil) throws -> [String: Double] {
    let http = wsURL.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/rtc", with: "/metrics")
    let curl = Process()
    let arguments = ["-s", "--max-time", "5", http]
    if let namespace {
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["ip", "netns", "exec", namespace, "/usr/bin/curl"] + arguments
    } else {
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = arguments
    }
    let output = Pipe()
    curl.standardOutput = output
    try curl.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    curl.waitUntilExit()
    var values: [String: Double] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
        let parts = line.split(separator: " ")
        if parts.count == 2, let v = Double(parts[1]) { values[String(parts[0])] = v }
    }
    return values
}
