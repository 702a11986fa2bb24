import Foundation
import Testing

@testable import RoomBot

/// The real binary: starts, binds its media workers, and stops with exit
/// status 0 on SIGTERM.
@Suite(.serialized) struct ServeProcessTests {
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
        // ICE-TCP is on by default: a TCP port per worker (RFC 6544).
        #expect(text.components(separatedBy: "media worker on tcp 127.0.0.1:").count == 3, "\(text)")
        // The effective configuration, with sources; no stale claims.
        #expect(text.contains("workers") && text.contains("2  (flag)"))
        #expect(text.contains("devkey=<redacted>") && !text.lowercased().contains("not built"))
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(text.contains("swiftlet: stopped"))
    }

    /// Starts `swiftlet serve --dev` with one worker and `drainSeconds`;
    /// returns it, its output (read so far) and its HTTP port.
    private func startServer(drainSeconds: Int) throws -> (Process, OutputReader, UInt16) {
        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "serve", "--dev", "--udp-port", "0", "--workers", "1", "--http", "127.0.0.1:0", "--drain-seconds",
            String(drainSeconds),
        ]
        let output = OutputReader()
        process.standardOutput = output.pipe
        process.standardError = output.pipe
        try process.run()
        _ = output.wait(for: "stop with Ctrl-C", seconds: 20)
        let line = output.text.split(separator: "\n").first { $0.contains("room WebSocket") } ?? ""
        let port = line.split(separator: ":").last.flatMap { UInt16($0.prefix { $0.isNumber }) } ?? 0
        return (process, output, port)
    }

    /// The drain watched from outside: a participant with a DTLS-connected
    /// publisher transport; SIGTERM; then HTTP still answers (/readyz 503,
    /// /healthz, /metrics), new joins and WHIP get 503 with Retry-After,
    /// the participant hears going-away with the deadline, and at the
    /// deadline its WebSocket gets close 1001 and its transport DTLS
    /// close_notify; the process exits 0.
    @Test func drainIsVisibleFromOutsideAndEndsCleanly() throws {
        let (process, output, port) = try startServer(drainSeconds: 4)
        defer { if process.isRunning { process.terminate() } }
        try #require(port > 0, "no port in: \(output.text)")
        let client = try ProcessTestClient(port: port)
        try #require(try client.joinAndPublishAudio(room: "drain", identity: "alice"), "\(output.text)")
        let http = "http://127.0.0.1:\(port)"

        let signalled = Date()
        kill(process.processIdentifier, SIGTERM)
        #expect(client.run(for: .seconds(3)) { client.message("going-away") != nil })
        let notice = try #require(client.message("going-away"))
        let deadline = Double(try #require(notice["deadline"] as? Int64 ?? (notice["deadline"] as? Int).map(Int64.init)))
        let expected = (signalled.timeIntervalSince1970 + 4) * 1000
        #expect(abs(deadline - expected) < 1500, "deadline \(deadline), expected about \(expected)")
        #expect((1...4).contains(notice["seconds"] as? Int ?? -1), "\(notice)")
        #expect(output.wait(for: "again to stop at once", seconds: 2), "\(output.text)")

        let ready = try curl(["\(http)/readyz"])
        #expect(ready.hasPrefix("HTTP/1.1 503") && ready.contains("draining"), "\(ready)")
        #expect(try curl(["\(http)/healthz"]).hasPrefix("HTTP/1.1 200"))
        let metrics = try curl(["\(http)/metrics"])
        #expect(metrics.hasPrefix("HTTP/1.1 200") && metrics.contains("process_resident_memory_bytes"))
        #expect(metrics.contains("\nswiftlet_draining 1\n"))
        let upgrade = try curl([
            "-H", "Connection: Upgrade", "-H", "Upgrade: websocket", "-H", "Sec-WebSocket-Version: 13",
            "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "\(http)/rtc",
        ])
        #expect(upgrade.hasPrefix("HTTP/1.1 503") && upgrade.lowercased().contains("retry-after: "), "\(upgrade)")
        let whip = try curl([
            "-X", "POST", "-H", "Content-Type: application/sdp", "-H",
            "Authorization: Bearer \(ProcessTestClient.devToken(identity: "bob", room: "drain"))", "--data-binary", "v=0",
            "\(http)/whip/drain",
        ])
        #expect(whip.hasPrefix("HTTP/1.1 503") && whip.lowercased().contains("retry-after: "), "\(whip)")
        // The session is still up while draining.
        #expect(client.closedReason == nil)
        #expect(client.publisher?.isConnected == true)

        // The deadline: close 1001 on the WebSocket, close_notify on DTLS
        // (the transport reports `closed`, which only close_notify causes).
        #expect(client.run(for: .seconds(8)) { client.closedReason != nil && client.publisher?.failure != nil })
        #expect(client.closedReason?.hasPrefix("websocket closed 1001") == true, "\(client.closedReason ?? "open")")
        #expect(client.publisher?.failure?.kind == "dtls_closed", "\(String(describing: client.publisher?.failure))")
        #expect(Date().timeIntervalSince(signalled) > 3.5)
        #expect(output.waitForExit(process, seconds: 10))
        #expect(process.terminationStatus == 0, "\(output.text)")
        #expect(output.text.contains("closed 1 media transport(s)"), "\(output.text)")
        // Our close answered the server's: none left unanswered.
        #expect(!output.text.contains("unanswered"), "\(output.text)")
    }

    /// A second signal during the drain stops at once, with status 143.
    @Test func secondSIGTERMStopsAtOnce() throws {
        let (process, output, port) = try startServer(drainSeconds: 60)
        defer { if process.isRunning { process.terminate() } }
        try #require(port > 0, "no port in: \(output.text)")
        // A participant keeps the drain from ending by itself.
        let client = try ProcessTestClient(port: port)
        #expect(client.run(for: .seconds(5)) { client.signaling.phase == .open })
        client.send(["type": "join", "token": ProcessTestClient.devToken(identity: "carol", room: "r")])
        #expect(client.run(for: .seconds(5)) { client.message("joined") != nil })
        kill(process.processIdentifier, SIGTERM)
        #expect(output.wait(for: "again to stop at once", seconds: 5), "\(output.text)")
        let second = Date()
        kill(process.processIdentifier, SIGTERM)
        #expect(output.waitForExit(process, seconds: 5))
        #expect(Date().timeIntervalSince(second) < 3)
        #expect(process.terminationStatus == 143, "\(output.text)")
        #expect(output.text.contains("SIGTERM again: stopping now"), "\(output.text)")
        // Still a clean close for the participant.
        #expect(client.run(for: .seconds(3)) { client.closedReason != nil })
        #expect(client.closedReason?.hasPrefix("websocket closed 1001") == true, "\(client.closedReason ?? "open")")
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

    /// `--log-format json` end to end: a refused WHIP request with a
    /// token-shaped credential gives one JSON object on standard error,
    /// at warning, with the status and the remote address, and no token.
    @Test func jsonLogsCarryRefusalsAndNoToken() throws {
        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "serve", "--dev", "--log-format=json", "--udp-port", "0", "--workers", "1", "--http", "127.0.0.1:0",
        ]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("stop with Ctrl-C"), Date() < deadline, process.isRunning {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let line = try #require(text.split(separator: "\n").first { $0.contains("room WebSocket") })
        let port = try #require(line.split(separator: ":").last.flatMap { UInt16($0.prefix { $0.isNumber }) })

        let token = "eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJlLW5vdC12YWxpZA"
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(rc == 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array(
            ("POST /whip/r HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Type: application/sdp\r\n"
                + "Authorization: Bearer \(token)\r\nContent-Length: 4\r\n\r\nv=0\n").utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var response = [UInt8]()
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        close(fd)
        #expect(String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 401"))

        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(!log.contains(token) && !log.contains("c2lnbmF0dXJlLW5vdC12YWxpZA"))
        let objects = log.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
        }
        #expect(objects.count == log.split(separator: "\n").count, "every line is one JSON object:\n\(log)")
        let refusal = try #require(objects.first { $0["msg"] == "WHIP request refused" }, "\(log)")
        #expect(refusal["level"] == "warning" && refusal["status"] == "401" && refusal["room"] == "r")
        #expect(refusal["remote"]?.hasPrefix("127.0.0.1:") == true)
    }
}
