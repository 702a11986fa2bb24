import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One network namespace for a browser test: a veth pair with both ends
/// inside it (10.77.9.1/24 and 10.77.9.2/24), loopback up and a default
/// route, so that Firefox, which pairs no 127.0.0.1 candidate and thinks
/// it is offline without a route (FACTS.md), has a real interface while
/// nothing leaves the namespace. The dev server runs inside it with HTTP
/// on the namespace's own 127.0.0.1 (a secure context for the pages) and
/// its media on 10.77.9.1; the drivers run inside it too, through
/// `ip netns exec`. Unlike MediaWorkerTests' `VethNamespaces` (two
/// namespaces, code entering them with setns), everything here is a child
/// process. The name carries the pid and a random suffix; `delete()` (call
/// it on every path) removes the namespace and the veth pair with it.
package final class BrowserNamespace {
    package struct Unavailable: Error, CustomStringConvertible { package let description: String }

    package static let mediaAddress = "10.77.9.1"
    package let name: String

    package init() throws(Unavailable) {
        let tag = "\(getpid() % 100_000)-\(Int.random(in: 100...999))"
        name = "swiftlet-ff-\(tag)"
        let steps: [[String]] = [
            ["netns", "add", name],
            ["-n", name, "link", "add", "swfa", "type", "veth", "peer", "name", "swfb"],
            ["-n", name, "addr", "add", "\(Self.mediaAddress)/24", "dev", "swfa"],
            ["-n", name, "addr", "add", "10.77.9.2/24", "dev", "swfb"],
            ["-n", name, "link", "set", "lo", "up"],
            ["-n", name, "link", "set", "swfa", "up"],
            ["-n", name, "link", "set", "swfb", "up"],
            ["-n", name, "route", "add", "default", "via", "10.77.9.2", "dev", "swfa"],
        ]
        for step in steps {
            if let failure = IPCommand.run(step) {
                delete()
                throw Unavailable(description: "ip \(step.joined(separator: " ")): \(failure)")
            }
        }
    }

    package func delete() { _ = IPCommand.run(["netns", "del", name]) }

    /// `ip netns exec NAME executable arguments...`, as a Process not yet run.
    package func process(_ executable: String, _ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ip", "netns", "exec", name, executable] + arguments
        return process
    }

    /// `swiftlet serve --dev` inside the namespace (HTTP on its 127.0.0.1:8080,
    /// free in a fresh namespace; one media worker on `mediaAddress`), its
    /// output in `log` (a file: the dev server logs every message, more
    /// than a pipe holds). Started; stop it with `stop(_:)`.
    package func startDevServer(log: URL) throws -> Process {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("swiftlet")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let server = process(
            binary.path,
            [
                "serve", "--dev", "--media-bind", Self.mediaAddress, "--workers", "1",
                // Browsers killed without leaving would hold the drain open.
                "--drain-seconds", "1s",
            ])
        let handle = try FileHandle(forWritingTo: log)
        server.standardOutput = handle
        server.standardError = handle
        try server.run()
        return server
    }

    package static func stop(_ server: Process) {
        guard server.isRunning else { return }
        kill(server.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while server.isRunning, Date() < deadline { usleep(20_000) }
        if server.isRunning { kill(server.processIdentifier, SIGKILL) }
        server.waitUntilExit()
    }
}
