import DTLS
import Foundation
import NetIO
import Rooms
import Signaling
import SignalingServer
import Synchronization
import TLS
import Testing
import Wire

/// Runs Scripts/interop/tls_probe.py (Python's ssl module, an independent
/// TLS client) against `port`; returns its JSON.
func tlsProbe(port: UInt16, arguments: [String] = []) throws -> [String: Any] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [root.appendingPathComponent("Scripts/interop/tls_probe.py").path, "--port", String(port)] + arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()  // the probe's own timeout bounds this
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "probe said: \(text)")
}

/// The HTTPS/WSS listener of the signalling server, checked with Python's
/// ssl module and raw sockets.
@Suite(.serialized) struct SignalingServerTLSTests {
    static let certificate = try! DTLSCertificate.generate(
        issuedAt: Int64(Date().timeIntervalSince1970), subjectAltNames: "DNS:localhost,IP:127.0.0.1")

    /// The certificate as a CA file for the probe; removed by the caller.
    private func caFile(_ certificate: DTLSCertificate) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-ca-\(UUID().uuidString).pem")
        try Data(certificate.certificatePEM.utf8).write(to: url)
        return url
    }

    private func startServer(_ slot: TLSContextSlot, requestTimeout: Duration = .seconds(10)) throws -> SignalingServer {
        var timeouts = SignalingTimeouts()
        timeouts.request = requestTimeout
        return try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!,
            secure: (SocketAddress(ip: "127.0.0.1", port: 0)!, slot), verifier: AccessTokenVerifier(keys: ["k": "s"]),
            rooms: RoomDirectory<RandomIdentifiers>.Configuration(), timeouts: timeouts)
    }

    private static func context(_ certificate: DTLSCertificate) throws -> TLSContext {
        try TLSContext.server(certificateChainPEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
    }

    @Test func pythonSSLGetsHealthOverTLS13AndTLS12WithCloseNotify() throws {
        let server = try startServer(TLSContextSlot(try Self.context(Self.certificate)))
        defer { server.stop() }
        let port = try #require(server.secureLocalAddress?.port)
        let ca = try caFile(Self.certificate)
        defer { try? FileManager.default.removeItem(at: ca) }

        let tls13 = try tlsProbe(port: port, arguments: ["--cafile", ca.path])
        #expect(tls13["error"] == nil, "\(tls13)")
        #expect(tls13["version"] as? String == "TLSv1.3")
        #expect(tls13["alpn"] as? String == "http/1.1")
        // Read to the end without SSLEOFError: the server sent close_notify.
        #expect((tls13["response"] as? String)?.hasPrefix("HTTP/1.1 200") == true)

        let tls12 = try tlsProbe(
            port: port, arguments: ["--cafile", ca.path, "--max-version", "1.2", "--server-name", "127.0.0.1"])
        #expect(tls12["version"] as? String == "TLSv1.2", "\(tls12)")
        #expect((tls12["response"] as? String)?.hasPrefix("HTTP/1.1 200") == true)

        // The plain listener still serves plain HTTP.
        #expect(
            try rawTCPExchange(server, sending: "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").response
                .hasPrefix("HTTP/1.1 200"))
    }

    @Test func plainHTTPOrGarbageOnTheTLSPortCostsOnlyThatConnection() throws {
        let server = try startServer(TLSContextSlot(try Self.context(Self.certificate)))
        defer { server.stop() }
        let secure = try #require(server.secureLocalAddress)
        let plain = try rawTCPExchange(secure, sending: "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        // Closed at once with a TLS alert (content type 21), never an HTTP answer.
        #expect(!plain.response.contains("HTTP/1.1"))
        #expect(plain.seconds < 2)
        let garbage = try rawTCPExchange(secure, sending: String(repeating: "\u{7F}", count: 500))
        #expect(garbage.seconds < 2)
        let ca = try caFile(Self.certificate)
        defer { try? FileManager.default.removeItem(at: ca) }
        let after = try tlsProbe(port: secure.port, arguments: ["--cafile", ca.path])
        #expect((after["response"] as? String)?.hasPrefix("HTTP/1.1 200") == true, "\(after)")
    }

    @Test func aFailedHandshakeIsLoggedInDevMode() throws {
        let lines = Mutex<[String]>([])
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!,
            secure: (SocketAddress(ip: "127.0.0.1", port: 0)!, TLSContextSlot(try Self.context(Self.certificate))),
            verifier: AccessTokenVerifier(keys: ["k": "s"]), rooms: RoomDirectory<RandomIdentifiers>.Configuration(),
            log: ServerLog(minimum: .debug) { line in lines.withLock { $0.append(line) } })
        defer { server.stop() }
        _ = try rawTCPExchange(try #require(server.secureLocalAddress), sending: "GET / HTTP/1.1\r\n\r\n")
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains("TLS connection failed: TLS handshake failed: ") }, "\(logged)")
    }

    @Test func silentOrSlowHandshakeIsCutAtTheRequestTimeout() throws {
        let server = try startServer(TLSContextSlot(try Self.context(Self.certificate)), requestTimeout: .milliseconds(400))
        defer { server.stop() }
        let secure = try #require(server.secureLocalAddress)
        let silent = try rawTCPExchange(secure, sending: "")
        #expect(silent.seconds > 0.3 && silent.seconds < 3, "\(silent.seconds)")
        // The first bytes of a ClientHello record, then nothing.
        let partial = try rawTCPExchange(secure, sending: "\u{16}\u{03}\u{01}")
        #expect(partial.seconds > 0.3 && partial.seconds < 3, "\(partial.seconds)")
    }

    @Test func replacingTheContextServesTheNewCertificateToNewConnections() throws {
        let slot = TLSContextSlot(try Self.context(Self.certificate))
        let server = try startServer(slot)
        defer { server.stop() }
        let port = try #require(server.secureLocalAddress?.port)
        let before = try tlsProbe(port: port, arguments: ["--insecure"])
        #expect(
            before["certificate"] as? String == Data(try Self.context(Self.certificate).leafCertificateDER).base64EncodedString())

        let renewed = try DTLSCertificate.generate(
            issuedAt: Int64(Date().timeIntervalSince1970), subjectAltNames: "DNS:localhost")
        let next = try Self.context(renewed)
        slot.replace(with: next)
        let after = try tlsProbe(port: port, arguments: ["--insecure"])
        #expect(after["certificate"] as? String == Data(next.leafCertificateDER).base64EncodedString())
    }
}

/// A real chain made by the `openssl` command: root CA, intermediate,
/// RSA leaf for localhost. The client trusts only the root, so it verifies
/// only if the server sends the intermediate after the leaf.
@Suite(.serialized) struct SignalingServerTLSChainTests {
    private func makeChain(in directory: URL) throws {
        let script = """
            set -e
            cd '\(directory.path)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
              -subj '/CN=Test Root' -days 2 -addext basicConstraints=critical,CA:TRUE \
              -addext keyUsage=critical,keyCertSign 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout int.key -out int.csr \
              -subj '/CN=Test Intermediate' 2>/dev/null
            printf 'basicConstraints=critical,CA:TRUE\\nkeyUsage=critical,keyCertSign\\n' > int.ext
            openssl x509 -req -in int.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out int.pem -days 2 \
              -extfile int.ext 2>/dev/null
            openssl req -newkey rsa:2048 -nodes -keyout leaf.key -out leaf.csr -subj '/CN=localhost' 2>/dev/null
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > leaf.ext
            openssl x509 -req -in leaf.csr -CA int.pem -CAkey int.key -CAcreateserial -out leaf.pem -days 2 \
              -extfile leaf.ext 2>/dev/null
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl could not make the test chain")
    }

    @Test func anIntermediateAfterTheLeafLetsAClientThatTrustsOnlyTheRootVerify() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-chain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeChain(in: directory)
        func read(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        let chained = try TLSContext.server(
            certificateChainPEM: try read("leaf.pem") + read("int.pem"), privateKeyPEM: try read("leaf.key"))
        let leafOnly = try TLSContext.server(certificateChainPEM: try read("leaf.pem"), privateKeyPEM: try read("leaf.key"))
        #expect(chained.leafSubject == "/CN=localhost")
        let slot = TLSContextSlot(chained)
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, secure: (SocketAddress(ip: "127.0.0.1", port: 0)!, slot),
            verifier: AccessTokenVerifier(keys: ["k": "s"]), rooms: RoomDirectory<RandomIdentifiers>.Configuration())
        defer { server.stop() }
        let port = try #require(server.secureLocalAddress?.port)
        let root = directory.appendingPathComponent("ca.pem").path

        let verified = try tlsProbe(port: port, arguments: ["--cafile", root])
        #expect((verified["response"] as? String)?.hasPrefix("HTTP/1.1 200") == true, "\(verified)")

        slot.replace(with: leafOnly)
        let unverified = try tlsProbe(port: port, arguments: ["--cafile", root])
        #expect((unverified["error"] as? String)?.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(unverified)")
    }

    /// A drain keeps HTTP serving so that operators can watch it
    /// (docs/OPERATIONS.md): over TLS too, /readyz says 503 and /healthz 200.
    @Test func drainKeepsTheTLSListenerServing() throws {
        let certificate = SignalingServerTLSTests.certificate
        let server = try SignalingServer(
            bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!,
            secure: (
                SocketAddress(ip: "127.0.0.1", port: 0)!,
                TLSContextSlot(
                    try TLSContext.server(
                        certificateChainPEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM))
            ), verifier: AccessTokenVerifier(keys: ["k": "s"]), rooms: RoomDirectory<RandomIdentifiers>.Configuration())
        defer { server.stop() }
        let port = try #require(server.secureLocalAddress?.port)
        func status(_ path: String) throws -> String? {
            (try tlsProbe(port: port, arguments: ["--insecure", "--path", path])["response"] as? String)
                .map { String($0.prefix(12)) }
        }
        #expect(try status("/readyz") == "HTTP/1.1 200")
        server.drain(until: MonotonicClock.now() + .seconds(30), deadlineEpochMilliseconds: 0)
        #expect(try status("/readyz") == "HTTP/1.1 503")
        #expect(try status("/healthz") == "HTTP/1.1 200")
    }
}
