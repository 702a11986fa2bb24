import Foundation

/// A product of the same build (swiftlet, roombot): the test bundle lives
/// next to them.
func builtProduct(_ name: String) -> URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
}

/// Starts `swiftlet serve --dev` on free ports with one media worker and
/// waits (at most 20 s) until it says how to stop it (`extraArguments`
/// after the defaults); returns the process,
/// its output pipe and its room WebSocket URL ("" if it never said).
func startDevServer(_ extraArguments: [String] = []) throws -> (Process, Pipe, String) {
    let (process, output, text) = try startDevServer(extraArguments: extraArguments)
    let line = text.split(separator: "\n").first { $0.contains("room WebSocket") } ?? ""
    let url = line.split(separator: " ").last.map(String.init) ?? ""
    return (process, output, url)
}

/// The same with more arguments (`--tls`...); returns everything it printed
/// up to "stop with Ctrl-C".
func startDevServer(extraArguments: [String]) throws -> (Process, Pipe, String) {
    let process = Process()
    process.executableURL = builtProduct("swiftlet")
    process.arguments = ["serve", "--dev", "--udp-port", "0", "--workers", "1", "--http", "127.0.0.1:0"] + extraArguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    var text = ""
    let deadline = Date().addingTimeInterval(20)
    while !text.contains("stop with Ctrl-C"), Date() < deadline, process.isRunning {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        text += String(decoding: chunk, as: UTF8.self)
    }
    return (process, output, text)
}
