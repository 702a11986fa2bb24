import DTLS
import ICE
import MediaRouter
import MediaWorker
import NetIO
import PeerSession
import RTP
import SFUTesting
import SRTP
import Synchronization
import Testing
import Wire

/// A media worker whose `TransportEngine` echoes every packet it decrypts
/// back to its sender, re-protected with its own keys.
final class EchoServer: Sendable {
    let worker: UDPWorker<TransportEngine>
    let certificate: DTLSCertificate
    let echoed = Mutex(0)
    private let thread = Mutex<WorkerThread?>(nil)

    /// Binds the worker (on the calling thread: in a network namespace,
    /// that of the caller) without starting it; with `tcp`, its ICE-TCP
    /// port too, on the same address and any free port.
    init(bindingTo address: SocketAddress, tcp: ICETCPLimits? = nil) throws {
        certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let engine = TransportEngine()
        let tcpAddress = tcp.map { (address: SocketAddress(ip: address.ip, port: 0)!, limits: $0) }
        worker = try UDPWorker(bindingTo: address, engine: engine, tcp: tcpAddress)
        engine.onMedia = { [unowned engine, unowned self] id, kind, buffer, _, transmit in
            let isRTCP = if case .rtcp = kind { true } else { false }
            let length =
                switch kind {
                case .rtp(let n), .rtcp(let n): n;
                case .handled: 0
                }
            if engine.sendRTP(UnsafeRawBufferPointer(rebasing: buffer[0..<length]), to: id, rtcp: isRTCP, output: transmit) {
                echoed.withLock { $0 += 1 }
            }
        }
    }

    func start() {
        let worker = worker
        thread.withLock { $0 = WorkerThread { worker.run() } }
    }

    func stop() {
        worker.requestStop()
        thread.withLock {
            $0?.join(); $0 = nil
        }
    }

    /// Opens transport `id` for `client`, which reaches it on `candidate`
    /// only; connects (ICE, DTLS) and checks that RTP and RTCP come back
    /// decrypted and intact.
    func connectAndEcho(_ client: some EchoClient, on candidate: TransportAddress, profile: SRTPProfile, id: UInt64) throws {
        let serverCredentials = ICECredentials.random()
        let clientCredentials = client.transport.localCredentials
        let clientFingerprint = client.certificate.fingerprint(.sha256)
        let certificate = certificate
        worker.mailbox.post { engine, now, _ in
            var configuration = PeerTransport.Configuration()
            configuration.dtls.srtpProfiles = [profile]
            guard
                let t = try? PeerTransport(
                    role: .server, certificate: certificate, localCredentials: serverCredentials,
                    configuration: configuration, now: now)
            else { return }
            t.setRemoteParameters(credentials: clientCredentials, fingerprints: [clientFingerprint], now: now)
            engine.add(t, id: TransportID(id))
        }
        let now = MonotonicClock.now()
        client.transport.setRemoteParameters(
            credentials: serverCredentials, fingerprints: [certificate.fingerprint(.sha256)], now: now)
        client.transport.addLocalCandidate(.host(client.local), now: now)
        // Over TCP too a UDP-kind candidate: the full agent keeps UDP
        // candidates only, and `TCPMediaClient` puts every packet on its
        // connection; the address itself is marked TCP.
        client.transport.addRemoteCandidate(.host(candidate), now: now)

        try client.pump(for: .seconds(10)) { client.transport.state == .connected }
        try #require(client.transport.state == .connected, "client \(client.local) to \(candidate)")
        #expect(client.transport.srtpProfile == profile)
        #expect(client.transport.selectedAddress == candidate)

        let before = echoed.withLock { $0 }
        let packets = (UInt16(1)...20).map {
            RTPBuilders.packet(sequenceNumber: $0, ssrc: 0xCAFE, payload: RTPBuilders.opusPayload(frameBytes: 80))
        }
        let reports = (0..<3).map { _ in RTCPBuilders.receiverReportWithCNAME(sender: SSRC(0xCAFE), cname: "loopback") }
        for p in packets { #expect(client.sendMedia(p, rtcp: false)) }
        for r in reports { #expect(client.sendMedia(r, rtcp: true)) }
        try client.pump(for: .seconds(5)) { client.received.count == packets.count + reports.count }

        #expect(echoed.withLock { $0 } - before == packets.count + reports.count)
        let rtpBack = client.received.filter { if case .rtp = $0.kind { true } else { false } }.map(\.bytes)
        let rtcpBack = client.received.filter { if case .rtcp = $0.kind { true } else { false } }.map(\.bytes)
        #expect(Set(rtpBack) == Set(packets))
        #expect(rtcpBack == reports)
    }
}

@Suite(.serialized) struct LoopbackTransportTests {
    @Test(arguments: [
        (SRTPProfile.aeadAES128GCM, "127.0.0.1"), (SRTPProfile.aesCM128HMACSHA1_80, "127.0.0.1"),
        (SRTPProfile.aeadAES128GCM, "::1"),
    ])
    func serverAndClientExchangeSRTPAndSRTCPOverRealUDP(profile: SRTPProfile, ip: String) throws {
        let server = try EchoServer(bindingTo: SocketAddress(ip: ip, port: 0)!)
        server.start()
        defer { server.stop() }
        let client = try UDPClient(
            certificate: try DTLSCertificate.generate(issuedAt: 1_790_000_000), profiles: [profile], ip: ip)
        try server.connectAndEcho(client, on: server.worker.localAddress.transportAddress, profile: profile, id: 1)
    }

    /// A server bound to the wildcard, reached on 127.0.0.2 by a client at
    /// 127.0.0.1: left to itself the kernel would answer from 127.0.0.1,
    /// and the client's ICE agent drops a response that does not come from
    /// where its check went (RFC 8445 section 7.2.5.2.1). The STUN
    /// responses, DTLS and media must all leave from 127.0.0.2.
    @Test(arguments: ["0.0.0.0", "::"])
    func wildcardServerAnswersFromTheAddressTheClientReached(bindIP: String) throws {
        let server = try EchoServer(bindingTo: SocketAddress(ip: bindIP, port: 0)!)
        server.start()
        defer { server.stop() }
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        for (id, last) in [(UInt64(1), UInt8(2)), (2, 1)] {
            let client = try UDPClient(certificate: certificate, profiles: [.aeadAES128GCM], ip: "127.0.0.1")
            let candidate = TransportAddress(ipv4: 127, 0, 0, last, port: server.worker.localAddress.port)
            try server.connectAndEcho(client, on: candidate, profile: .aeadAES128GCM, id: id)
        }
    }
}
