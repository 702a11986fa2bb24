import Foundation
import NetIO
import Rooms
import Signaling
import SignalingServer
import Testing

/// DNS rebinding protection (issue #12, defect 7): a dev server answers
/// only to loopback names, and browsers' WebSocket and `/dev/token`
/// requests only from loopback origins; `allowedOrigins` restricts the
/// WebSocket's Origin outside dev mode.
@Suite(.serialized) struct HostCheckTests {
    private func startServer(dev: Bool, allowedOrigins: [String]? = nil) throws -> SignalingServer {
        try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(),
            devTokens: dev ? DevTokenIssuer(key: "k", secret: "s", ttlSeconds: 600) : nil, loopbackHostsOnly: dev,
            allowedOrigins: allowedOrigins)
    }

    private func status(_ server: SignalingServer, _ path: String, host: String, origin: String? = nil) throws -> Int {
        let originLine = origin.map { "Origin: \($0)\r\n" } ?? ""
        let raw = try rawTCPExchange(
            server, sending: "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\(originLine)Connection: close\r\n\r\n"
        ).response
        return Int(raw.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func aDevServerAnswersOnlyToLoopbackNames() throws {
        let server = try startServer(dev: true)
        defer { server.stop() }
        let port = server.localAddress.port
        let token = "/dev/token?room=r&identity=a"
        for host in ["localhost:\(port)", "127.0.0.1:\(port)", "[::1]:\(port)", "LOCALHOST:\(port)"] {
            #expect(try status(server, "/healthz", host: host) == 200, "\(host)")
            #expect(try status(server, token, host: host) == 200, "\(host)")
        }
        // A rebound name, another port, no Host at all.
        for host in ["evil.example:\(port)", "localhost:\(port &+ 1)", "localhost", "", "127.0.0.1.nip.io:\(port)"] {
            #expect(try status(server, token, host: host) == 421, "\(host)")
        }
        let refused = try rawTCPExchange(
            server, sending: "GET \(token) HTTP/1.1\r\nHost: evil.example:\(port)\r\nConnection: close\r\n\r\n"
        ).response
        #expect(refused.contains("DNS rebinding"))
        #expect(!refused.contains("token\""))
        // The right Host from a foreign page's origin: no token.
        #expect(try status(server, token, host: "localhost:\(port)", origin: "http://evil.example") == 403)
        #expect(try status(server, token, host: "localhost:\(port)", origin: "http://localhost:\(port)") == 200)
    }

    @Test func productionServesAnyHost() throws {
        let server = try startServer(dev: false)
        defer { server.stop() }
        #expect(try status(server, "/healthz", host: "swiftlet.example.com") == 200)
    }

    /// Python's websockets library opening the room WebSocket with an
    /// Origin header: the HTTP status of the upgrade for each origin.
    private func webSocketStatuses(_ server: SignalingServer, host: String, origins: [String]) throws -> [Int] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let python = root.appendingPathComponent(".venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "run Scripts/setup: \(python.path) is missing")
        let script = """
            import json, socket, sys
            from websockets.sync.client import connect
            from websockets.exceptions import InvalidStatus
            port, host, origins = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
            out = []
            for origin in origins:
                try:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                    with connect(f"ws://{host}/rtc", sock=sock, origin=origin, open_timeout=5):
                        out.append(101)
                except InvalidStatus as e:
                    out.append(e.response.status_code)
            print(json.dumps(out))
            """
        let process = Process()
        process.executableURL = python
        process.arguments = [
            "-c", script, "\(server.localAddress.port)", host,
            String(decoding: try JSONEncoder().encode(origins), as: UTF8.self),
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Int], "output: \(text)")
    }

    @Test func theRoomWebSocketRefusesForeignOrigins() throws {
        let dev = try startServer(dev: true)
        defer { dev.stop() }
        let port = dev.localAddress.port
        #expect(
            try webSocketStatuses(
                dev, host: "localhost:\(port)",
                origins: ["http://localhost:\(port)", "http://127.0.0.1:\(port)", "http://evil.example", "null"])
                == [101, 101, 403, 403])

        let production = try startServer(dev: false, allowedOrigins: ["https://app.example.com"])
        defer { production.stop() }
        #expect(
            try webSocketStatuses(
                production, host: "sfu.example.com", origins: ["https://app.example.com", "https://evil.example"])
                == [101, 403])
    }
}
