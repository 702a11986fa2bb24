import Foundation

/// A real `redis-server` for one test, on a Unix socket in a fresh folder
/// (or a free loopback port): no persistence, stopped and removed by
/// `stop()` (and by deinit). Debian's redis-server is installed by
/// Scripts/setup; without it the test fails saying so.
package final class RedisServerProcess {
    package let directory: URL
    package let socketPath: String
    package let port: UInt16?
    private var process: Process?

    static let executable = "/usr/bin/redis-server"

    package init(tcp: Bool = false) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw Failure("no \(Self.executable): run Scripts/setup (installs redis-server)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socketPath = directory.appendingPathComponent("redis.sock").path
        port = tcp ? try Self.freePort() : nil
        try start()
    }

    deinit { stop() }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        init(_ d: String) { description = d }
    }

    /// Starts (again, after `stop(keepingFolder:)`) on the same socket/port.
    package func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.executable)
        var arguments = [
            "--port", String(port ?? 0), "--bind", "127.0.0.1", "--unixsocket", socketPath, "--unixsocketperm", "700",
            "--save", "", "--appendonly", "no", "--dir", directory.path, "--daemonize", "no", "--loglevel", "warning",
        ]
        if port == nil { arguments += ["--protected-mode", "no"] }
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        // Ready once the socket accepts (bounded: 10 s).
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: socketPath) { return }
            usleep(20_000)
        }
        stop()
        throw Failure("redis-server did not start within 10 s")
    }

    /// Stops the server; `keepingFolder` lets `start()` bring it back.
    package func stop(keepingFolder: Bool = false) {
        if let p = process, p.isRunning {
            // SIGKILL: a child inherits the test process's signal mask, in
            // which SIGTERM may be blocked; nothing is persisted anyway.
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        process = nil
        try? FileManager.default.removeItem(atPath: socketPath)
        if !keepingFolder { try? FileManager.default.removeItem(at: directory) }
    }

    /// A loopback port nothing listens on now (bind to 0, read, close).
    package static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw Failure("no free port") }
        return UInt16(bigEndian: address.sin_port)
    }
}
