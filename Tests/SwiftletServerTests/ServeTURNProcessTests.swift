import Foundation
import NetIO
import Testing

/// `swiftlet serve --turn` against an independent TURN client, coturn's
/// `turnutils_uclient` (Debian `coturn`): it allocates with the credentials
/// the join response handed out, binds a channel to the SFU's media port
/// and sends through the relay, over UDP, TCP and TLS; a channel toward
/// any other address is refused with 403. Skipped with a reason where the
/// tool is missing (Scripts/setup installs it).
@Suite(.serialized) struct ServeTURNProcessTests {
    static let uclient = "/usr/bin/turnutils_uclient"

    /// Two free consecutive UDP ports on loopback, for two media workers:
    /// the uclient's RTP/RTCP pair of peers lands on both.
    private func freePortPair() throws -> UInt16 {
        for _ in 0..<50 {
            let first = try UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!)
            let port = try first.localAddress().port
            guard port < 65535, (try? UDPSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: port + 1)!)) != nil else {
                continue
            }
            return port
        }
        throw Failure.noPortPair
    }

    enum Failure: Error { case noPortPair }

    private func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try finish(start(arguments))
    }

    private func start(_ arguments: [String]) throws -> (Process, OutputReader) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.uclient)
        process.arguments = arguments
        let output = OutputReader()
        process.standardOutput = output.pipe
        process.standardError = output.pipe
        try process.run()
        return (process, output)
    }

    private func finish(_ started: (Process, OutputReader)) -> (status: Int32, output: String) {
        let (process, output) = started
        // Bounded: the client stops after its messages; kill it past 20 s.
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        // The reader thread may still hold the last bytes: a success ends
        // with the jitter line; anything else gets a short grace.
        _ = output.wait(for: "Average jitter", seconds: process.terminationStatus == 0 ? 2 : 0.3)
        return (process.terminationStatus, output.text)
    }

    @Test(.timeLimit(.minutes(2)))
    func coturnsClientRelaysToTheMediaPortsAndIsRefusedElsewhere() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.uclient) else {
            print("skipped: \(Self.uclient) is missing (apt-get install coturn; Scripts/setup)")
            return
        }
        let media = try freePortPair()
        let (server, output, url) = try startDevServer([
            "--turn", "--turn-port", "0", "--turn-tls-port", "0", "--tls", "--https", "127.0.0.1:0", "--udp-port", "\(media)",
            "--workers", "2",
        ])
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let turnLine = try #require(output.text.split(separator: "\n").first { $0.contains("TURN  ") }, "\(output.text)")
        func port(_ transport: String) throws -> String {
            let url = try #require(turnLine.split(separator: " ").first { $0.hasSuffix("?transport=\(transport)") })
            return String(url.split(separator: ":")[2].split(separator: "?")[0])
        }
        let (udpPort, tcpPort) = (try port("udp"), try port("tcp"))
        let tlsURL = try #require(turnLine.split(separator: " ").first { $0.hasPrefix("turns:") }, "\(turnLine)")
        let tlsPort = String(tlsURL.split(separator: ":")[2].split(separator: "?")[0])

        // The credentials a participant gets in its join response.
        let client = try ProcessTestClient(port: try #require(UInt16(url.split(separator: ":")[2].split(separator: "/")[0])))
        #expect(client.join(room: "turn-room", identity: "uclient"))
        let joined = try #require(client.message("joined"))
        let servers = try #require(joined["iceServers"] as? [[String: Any]], "\(joined)")
        let username = try #require(servers.first?["username"] as? String)
        let credential = try #require(servers.first?["credential"] as? String)
        #expect(username.hasSuffix(":uclient"))
        #expect((servers.first?["urls"] as? [String])?.contains("turn:127.0.0.1:\(udpPort)?transport=udp") == true)

        let common = ["-c", "-n", "10", "-z", "5", "-u", username, "-w", credential, "-e", "127.0.0.1"]
        // UDP, TCP and TLS at once: each client waits out its echo timeout
        // (the SFU does not echo), so in turn they would take three times
        // as long.
        let flags = ["udp": [], "tcp": ["-t"], "tls": ["-t", "-S"]]
        let clients = try [("udp", udpPort), ("tcp", tcpPort), ("tls", tlsPort)].map { transport, turnPort in
            (transport, try start(flags[transport, default: []] + common + ["-r", "\(media)", "-p", turnPort, "127.0.0.1"]))
        }
        for (transport, started) in clients {
            let relayed = finish(started)
            #expect(relayed.status == 0, "\(transport): \(relayed.output)")
            #expect(relayed.output.contains("tot_send_msgs=10"), "\(transport): \(relayed.output)")
            // No TURN error answer ("error 403 (Forbidden)"); over TLS the client
            // first tries TLS 1.0 and 1.1, which the floor of 1.2 refuses
            // (docs/TLS.md), and those lines say "error" too.
            #expect(relayed.output.firstMatch(of: /error \d{3} \(/) == nil, "\(transport): \(relayed.output)")
        }
        // Port 9 on the same host is not a media port: no relay there.
        let refused = try run(common + ["-r", "9", "-p", udpPort, "127.0.0.1"])
        #expect(refused.status != 0)
        #expect(refused.output.contains("error 403 (Forbidden)"), "\(refused.output)")
        // Wrong credentials: the signed Allocate is refused again (401), so
        // no allocation at all.
        let forged = try run([
            "-v", "-c", "-n", "1", "-u", username, "-w", "wrong", "-e", "127.0.0.1", "-r", "\(media)", "-p", udpPort,
            "127.0.0.1",
        ])
        #expect(forged.status != 0)
        #expect(forged.output.contains("Cannot complete Allocation"), "\(forged.output)")
        #expect(!forged.output.contains("Received relay addr"), "\(forged.output)")
    }
}
