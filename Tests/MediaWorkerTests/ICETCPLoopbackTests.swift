import DTLS
import MediaWorker
import NetIO
import SRTP
import STUN
import Testing
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// ICE over TCP (RFC 6544) on a real worker: a client that reaches the
/// server only through its passive TCP candidate gets ICE, DTLS, SRTP and
/// SRTCP through the same demux as UDP, and the worker's limits close what
/// it should.
@Suite(.serialized) struct ICETCPLoopbackTests {
    static func server(_ ip: String, limits: ICETCPLimits = .init()) throws -> EchoServer {
        try EchoServer(bindingTo: SocketAddress(ip: ip, port: 0)!, tcp: limits)
    }

    @Test(arguments: [
        (SRTPProfile.aeadAES128GCM, "127.0.0.1"), (SRTPProfile.aesCM128HMACSHA1_80, "127.0.0.1"),
        (SRTPProfile.aeadAES128GCM, "::1"),
    ])
    func serverAndClientExchangeSRTPAndSRTCPOverICETCP(profile: SRTPProfile, ip: String) throws {
        let server = try Self.server(ip)
        server.start()
        defer { server.stop() }
        let port = try #require(server.worker.tcpPort)
        let client = try TCPMediaClient(
            certificate: try DTLSCertificate.generate(issuedAt: 1_790_000_000), connectingTo: port.localAddress,
            profiles: [profile])
        let candidate = port.localAddress.transportAddress.overTCP
        try server.connectAndEcho(client, on: candidate, profile: profile, id: 1)
        server.stop()
        // Everything went over the connection: no datagram left the UDP socket.
        #expect(port.counters.framesReceived >= 20 + 3)
        #expect(port.counters.framesSent >= 20 + 3)
        #expect(port.counters.sendBufferDrops == 0)
        #expect(server.worker.transmittedDatagrams == 0)
    }

    /// A connection that never sends a check a transport accepts (here a
    /// Binding request for a ufrag nobody has) is closed after
    /// `bindingTimeout`; one that is validated stays.
    @Test func closesAConnectionWithoutAnAcceptedBindingInTime() throws {
        let server = try Self.server("127.0.0.1", limits: ICETCPLimits(bindingTimeout: .milliseconds(200)))
        server.start()
        defer { server.stop() }
        let port = try #require(server.worker.tcpPort)
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let stranger = try TCPMediaClient(certificate: certificate, connectingTo: port.localAddress)
        var request = STUNMessageBuilder(type: .bindingRequest, transactionID: .random())
        try request.appendUsername("nobody:client")
        try request.appendMessageIntegrity(key: Array("not-a-password-at-all".utf8))
        try request.appendFingerprint()
        request.bytes.withUnsafeBytes { stranger.sendFrame($0) }
        let good = try TCPMediaClient(certificate: certificate, connectingTo: port.localAddress)
        try server.connectAndEcho(good, on: port.localAddress.transportAddress.overTCP, profile: .aeadAES128GCM, id: 1)
        // The sweep runs once a second: 200 ms plus at most a second.
        try stranger.pump(for: .seconds(3)) { stranger.closed }
        #expect(stranger.closed)
        #expect(good.sendMedia([0x80, 0x60, 0, 100, 0, 0, 0, 1, 0, 0, 0xCA, 0xFE, 1, 2, 3, 4], rtcp: false))
        try good.pump(for: .milliseconds(300))
        #expect(!good.closed)
        server.stop()
        #expect(port.counters.bindingTimeouts == 1)
        #expect(port.counters.accepted == 2)
    }

    /// Over `maxConnectionsPerAddress` a connection is closed at accept.
    @Test func refusesConnectionsOverThePerAddressLimit() throws {
        let server = try Self.server("127.0.0.1", limits: ICETCPLimits(maxConnectionsPerAddress: 2))
        server.start()
        defer { server.stop() }
        let port = try #require(server.worker.tcpPort)
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let clients = try (0..<3).map { _ in try TCPMediaClient(certificate: certificate, connectingTo: port.localAddress) }
        for client in clients { try client.pump(for: .milliseconds(100)) { client.closed } }
        #expect(clients.map(\.closed) == [false, false, true])
        server.stop()
        #expect(port.counters.refused == 1)
    }

    /// A frame longer than allowed costs only itself: the connection stays
    /// in step and the next check still connects.
    @Test func skipsAnOversizedFrameAndStillConnects() throws {
        let server = try Self.server("127.0.0.1")
        server.start()
        defer { server.stop() }
        let port = try #require(server.worker.tcpPort)
        let client = try TCPMediaClient(
            certificate: try DTLSCertificate.generate(issuedAt: 1_790_000_000), connectingTo: port.localAddress)
        // LENGTH 4000 over the 2048-byte limit, then its 4000 bytes.
        client.writeAll([0x0F, 0xA0] + [UInt8](repeating: 0x17, count: 4000))
        try server.connectAndEcho(client, on: port.localAddress.transportAddress.overTCP, profile: .aeadAES128GCM, id: 1)
        server.stop()
        #expect(port.counters.framingErrors == 1)
    }
}
