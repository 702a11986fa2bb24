import DTLS
import Foundation
import TLS
import Testing

/// `swiftlet serve` with TLS, as a user runs it: `--dev --tls` (a generated
/// certificate, checked with curl), roombot over `wss://` and `https://`,
/// and a SIGHUP reload of configured certificate files.
@Suite(.serialized) struct ServeTLSProcessTests {
    /// The value after `label` on the line that starts with it (after spaces).
    private func printed(_ label: String, in text: String) -> String? {
        let line = text.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }
        return line.map { $0.trimmingCharacters(in: .whitespaces).dropFirst(label.count) }?
            .split(separator: " ").first.map(String.init)
    }

    private func runProcess(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable.hasPrefix("/") ? URL(fileURLWithPath: executable) : builtProduct(executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    private func stop(_ server: Process) {
        guard server.isRunning else { return }
        server.terminate()
        server.waitUntilExit()
    }

    @Test(.timeLimit(.minutes(2)))
    func devTLSServesCurlAndRoombotOverWSSAndHTTPS() throws {
        let (server, _, text) = try startDevServer(extraArguments: ["--tls", "--https", "127.0.0.1:0"])
        defer { stop(server) }
        let https = try #require(printed("HTTPS", in: text), "\(text)")
        let certificate = try #require(printed("TLS certificate", in: text), "\(text)")
        let spki = try #require(printed("TLS SPKI sha256", in: text), "\(text)")
        #expect(https.hasPrefix("https://127.0.0.1:"))
        #expect(Data(base64Encoded: spki)?.count == 32)
        let port = try #require(UInt16(https.dropFirst("https://127.0.0.1:".count).dropLast()))

        // curl verifies the generated certificate by name and by IP.
        for host in ["localhost", "127.0.0.1"] {
            let curl = try runProcess(
                "/usr/bin/curl",
                [
                    "-sS", "--max-time", "10", "--cacert", certificate, "--resolve", "localhost:\(port):127.0.0.1",
                    "https://\(host):\(port)/healthz", "-o", "/dev/null", "-w", "%{http_code} %{http_version}",
                ])
            #expect(curl.output == "200 1.1", "curl \(host): \(curl.output)")
        }
        // Without the CA, curl refuses it (the check is real).
        let untrusted = try runProcess("/usr/bin/curl", ["-sS", "--max-time", "10", "https://localhost:\(port)/healthz"])
        #expect(untrusted.status != 0)

        let json = FileManager.default.temporaryDirectory.appendingPathComponent("roombot-wss-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let bots = try runProcess(
            "roombot",
            [
                "--url", "wss://localhost:\(port)/rtc", "--ca-file", certificate, "--room", "tls", "--publishers", "1",
                "--subscribers", "1", "--duration", "5", "--dev", "--json", json.path,
            ])
        #expect(bots.status == 0, "\(bots.output)")
        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any]
        let groups = try #require(summary?["groups"] as? [String: Any])
        let overall = try #require(groups["overall"] as? [String: Any])
        #expect(overall["joined"] as? Int == 2)
        #expect(overall["transportsConnected"] as? Int == 2)
        let subscriber = try #require(groups["subscriber"] as? [String: Any])
        #expect(subscriber["tracksFlowing"] as? Int == 2, "\(subscriber)")
        #expect((subscriber["packets"] as? Double ?? 0) > 100)

        // WHIP and WHEP over https.
        let whip = try runProcess(
            "roombot",
            [
                "--url", "https://127.0.0.1:\(port)", "--ca-file", certificate, "--room", "tls-whip", "--whip", "--whep",
                "--publishers", "1", "--subscribers", "1", "--duration", "3", "--dev",
            ])
        #expect(whip.status == 0, "\(whip.output)")
        #expect(whip.output.contains("bots 2/2 joined"), "\(whip.output)")

        // A certificate the bot does not trust is a connect error, not a hang.
        let other = try DTLSCertificate.generate(issuedAt: Int64(Date().timeIntervalSince1970), subjectAltNames: "DNS:localhost")
        let wrongCA = FileManager.default.temporaryDirectory.appendingPathComponent("wrong-ca-\(UUID().uuidString).pem")
        try Data(other.certificatePEM.utf8).write(to: wrongCA)
        defer { try? FileManager.default.removeItem(at: wrongCA) }
        let refused = try runProcess(
            "roombot",
            [
                "--url", "wss://localhost:\(port)/rtc", "--ca-file", wrongCA.path, "--room", "tls", "--publishers", "1",
                "--subscribers", "0", "--duration", "2", "--dev", "--no-media",
            ])
        #expect(refused.status == 2, "\(refused.output)")
        #expect(refused.output.contains("connect=1"), "\(refused.output)")
    }

    @Test(.timeLimit(.minutes(1)))
    func sighupReloadsTheCertificateFilesAndKeepsTheOldOneOnError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certPath = directory.appendingPathComponent("cert.pem")
        let keyPath = directory.appendingPathComponent("key.pem")
        func install(_ c: DTLSCertificate) throws {
            try Data(c.certificatePEM.utf8).write(to: certPath)
            try Data(c.privateKeyPEM.utf8).write(to: keyPath)
        }
        func der(_ c: DTLSCertificate) throws -> String {
            Data(try TLSContext.server(certificateChainPEM: c.certificatePEM, privateKeyPEM: c.privateKeyPEM).leafCertificateDER)
                .base64EncodedString()
        }
        let now = Int64(Date().timeIntervalSince1970)
        let first = try DTLSCertificate.generate(issuedAt: now, subjectAltNames: "DNS:localhost")
        let second = try DTLSCertificate.generate(issuedAt: now, subjectAltNames: "DNS:localhost")
        try install(first)

        let (server, output, text) = try startDevServer(extraArguments: [
            "--tls-cert", certPath.path, "--tls-key", keyPath.path, "--https", "127.0.0.1:0",
        ])
        defer { stop(server) }
        let https = try #require(printed("HTTPS", in: text), "\(text)")
        let port = try #require(UInt16(https.dropFirst("https://127.0.0.1:".count).dropLast()))
        #expect(try tlsProbeCertificate(port) == (try der(first)))

        try install(second)
        #expect(try tlsProbeCertificate(port) == (try der(first)))  // no reload without the signal
        kill(server.processIdentifier, SIGHUP)
        #expect(try waitForLine("TLS certificate reloaded", output))
        #expect(try tlsProbeCertificate(port) == (try der(second)))

        // A key that does not match: the reload is refused, the old one stays.
        try Data(first.privateKeyPEM.utf8).write(to: keyPath)
        kill(server.processIdentifier, SIGHUP)
        #expect(try waitForLine("NOT reloaded", output))
        #expect(try tlsProbeCertificate(port) == (try der(second)))
        #expect(server.isRunning)
    }

    /// The certificate the server presents now, base64 DER, from Python's ssl.
    private func tlsProbeCertificate(_ port: UInt16) throws -> String? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let probe = try runProcess(
            "/usr/bin/python3",
            [root.appendingPathComponent("Scripts/interop/tls_probe.py").path, "--port", String(port), "--insecure"])
        let object = try JSONSerialization.jsonObject(with: Data(probe.output.utf8)) as? [String: Any]
        return object?["certificate"] as? String
    }

    /// Whether the server's output shows `marker` within 10 s.
    private func waitForLine(_ marker: String, _ output: OutputReader) throws -> Bool {
        output.wait(for: marker, seconds: 10)
    }
}
