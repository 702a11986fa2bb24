import DTLS
import Foundation
import MediaWorker
import NamespaceTesting
import NetIO
import Testing
import Wire

/// The set-up: a server bound to the wildcard in a network
/// namespace with two IPv4 and two IPv6 addresses, and a client in
/// another namespace reaching each. Each client sits on the other subnet's
/// prefix from the address it reaches, so the kernel's own choice of
/// source for the answer is the wrong one (the address on the client's
/// subnet): only answering from the arrival address lets ICE complete.
@Suite(.serialized) struct WildcardNamespaceTests {
    static let serverAddresses = ["10.77.1.1/24", "10.77.2.1/24", "fd00:77::1/64", "fd00:78::1/64"]
    static let clientAddresses = ["10.77.1.2/24", "10.77.2.2/24", "fd00:77::2/64", "fd00:78::2/64"]

    @Test func wildcardServerIsReachedOnEachOfItsAddresses() throws {
        let namespaces: VethNamespaces
        do {
            namespaces = try VethNamespaces(serverAddresses: Self.serverAddresses, clientAddresses: Self.clientAddresses)
        } catch {
            print("WildcardNamespaceTests skipped: cannot make network namespaces: \(error)")
            return
        }
        defer { namespaces.delete() }

        let (server, announced) = try namespaces.inside(namespaces.server) {
            let server = try EchoServer(bindingTo: SocketAddress(ip: "::", port: 0)!)
            let announced = try MediaAddresses.choose(
                bind: server.worker.localAddress.transportAddress, dualStack: server.worker.isDualStack, announce: nil,
                interfaces: NetworkInterfaces.current())
            return (server, announced)
        }
        // Every address of the namespace's veth end, not lo, not the
        // veth's own fe80:: address.
        let expected = Self.serverAddresses.map { SocketAddress(ip: String($0.prefix { $0 != "/" }), port: 0)!.transportAddress }
        #expect(Set(announced.addresses) == Set(expected))
        #expect(announced.addresses.count == expected.count)

        server.start()
        defer { server.stop() }
        let port = server.worker.localAddress.port
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let routes = [
            ("10.77.1.2", "10.77.2.1"), ("10.77.2.2", "10.77.1.1"), ("fd00:77::2", "fd00:78::1"), ("fd00:78::2", "fd00:77::1"),
        ]
        for (index, (clientIP, serverIP)) in routes.enumerated() {
            let client = try namespaces.inside(namespaces.client) {
                try UDPClient(certificate: certificate, profiles: [.aeadAES128GCM], ip: clientIP)
            }
            let candidate = SocketAddress(ip: serverIP, port: port)!.transportAddress
            try server.connectAndEcho(client, on: candidate, profile: .aeadAES128GCM, id: UInt64(index + 1))
        }
    }
}

/// The failure, end to end: `swiftlet serve` in production mode
/// with no announceIP and the default media bind, in a namespace with
/// two IPv4 and two IPv6 addresses, must announce those (never 0.0.0.0)
/// and let roombot, from another namespace, connect and get media. The
/// bots sit at 10.77.1.2 and can reach only 10.77.2.1 (10.77.1.1 is
/// blackholed on their side), while the server's kernel would answer
/// 10.77.1.2 from 10.77.1.1, its address on that subnet: the one pair ICE
/// can use works only if replies leave from the address they came to.
@Suite(.serialized) struct WildcardServeProcessTests {
    static func product(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    static func inNamespace(
        _ namespace: String, _ product: String, _ arguments: [String], environment: [String: String] = [:]
    )
        -> (Process, Pipe)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ip", "netns", "exec", namespace, Self.product(product).path] + arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        return (process, output)
    }

    /// What the server printed until it said how to stop it (at most 20 s).
    static func banner(of server: Process, _ output: Pipe) -> String {
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("stop with Ctrl-C"), Date() < deadline, server.isRunning {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text
    }

    /// Nothing but loopback (and the veth's fe80:: address): the server
    /// still starts, announces loopback only, and says so.
    @Test func onlyLoopbackLeftIsAnnouncedWithAWarning() throws {
        let namespaces: VethNamespaces
        do {
            namespaces = try VethNamespaces(serverAddresses: [], clientAddresses: [])
        } catch {
            print("WildcardServeProcessTests skipped: cannot make network namespaces: \(error)")
            return
        }
        defer { namespaces.delete() }
        let (server, output) = Self.inNamespace(
            namespaces.server, "swiftlet", ["serve", "--http", "127.0.0.1:0", "--udp-port", "0", "--workers", "1"],
            environment: ["SWIFTLET_API_KEY": "k", "SWIFTLET_API_SECRET": "a-long-random-secret-0123456789"])
        try server.run()
        defer {
            if server.isRunning {
                kill(server.processIdentifier, SIGTERM)
                server.waitUntilExit()
            }
        }
        let text = Self.banner(of: server, output)
        let media = try #require(text.split(separator: "\n").first { $0.contains("media worker on udp") }, "\(text)")
        #expect(media.contains("announcing 127.0.0.1:") && media.contains("[::1]:"), "\(media)")
        #expect(!media.contains("fe80"), "\(media)")
        #expect(text.contains("warning: no network interface but loopback"), "\(text)")
    }

    @Test func productionServerWithDefaultBindIsReachedByRoombot() throws {
        let namespaces: VethNamespaces
        do {
            namespaces = try VethNamespaces(
                serverAddresses: WildcardNamespaceTests.serverAddresses, clientAddresses: ["10.77.1.2/24"])
            try namespaces.addRoute(in: namespaces.client, ["10.77.2.0/24", "dev", namespaces.clientLink])
            try namespaces.addRoute(in: namespaces.client, ["blackhole", "10.77.1.1/32"])
        } catch {
            print("WildcardServeProcessTests skipped: cannot make network namespaces: \(error)")
            return
        }
        defer { namespaces.delete() }
        let secret = "a-long-random-secret-0123456789"
        let (server, output) = Self.inNamespace(
            namespaces.server, "swiftlet", ["serve", "--http", "10.77.2.1:0", "--udp-port", "0", "--workers", "1"],
            environment: ["SWIFTLET_API_KEY": "k", "SWIFTLET_API_SECRET": secret])
        try server.run()
        defer {
            if server.isRunning {
                kill(server.processIdentifier, SIGTERM)
                server.waitUntilExit()
            }
        }
        // `ip netns exec` execs the server, so this pid is the server's.
        let text = Self.banner(of: server, output)
        let media = try #require(text.split(separator: "\n").first { $0.contains("media worker on udp") }, "\(text)")
        #expect(media.contains("udp [::]:"))
        for ip in ["10.77.1.1:", "10.77.2.1:", "[fd00:77::1]:", "[fd00:78::1]:"] { #expect(media.contains(ip), "\(media)") }
        #expect(!media.contains("0.0.0.0") && !media.contains("127.0.0.1") && !media.contains("fe80"))
        let socket = try #require(text.split(separator: "\n").first { $0.contains("room WebSocket") }?.split(separator: " ").last)

        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let (bot, botOutput) = Self.inNamespace(
            namespaces.client, "roombot",
            [
                "--url", String(socket), "--room", "r", "--publishers", "1", "--subscribers", "1", "--duration", "3",
                "--key", "k", "--secret", secret, "--bind", "10.77.1.2", "--json", json.path,
            ])
        try bot.run()
        let botText = String(decoding: botOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bot.waitUntilExit()
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]
        let overall = try #require((object?["groups"] as? [String: Any])?["overall"] as? [String: Any], "\(botText)")
        #expect(overall["joined"] as? Int == 2, "\(botText)")
        #expect(overall["transportsConnected"] as? Int == 2, "\(botText)")
        #expect((overall["packets"] as? Int ?? 0) > 0, "\(botText)")
    }
}
