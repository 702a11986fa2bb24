import DTLS
import ICE
import MediaWorker
import NetIO
import PeerSession
import RTP
import SFUTesting
import SRTP
import Synchronization
import Testing
import Wire

@Suite(.serialized) struct LoopbackTransportTests {
    @Test(arguments: [
        (SRTPProfile.aeadAES128GCM, "127.0.0.1"), (SRTPProfile.aesCM128HMACSHA1_80, "127.0.0.1"),
        (SRTPProfile.aeadAES128GCM, "::1"),
    ])
    func serverAndClientExchangeSRTPAndSRTCPOverRealUDP(profile: SRTPProfile, ip: String) throws {
        let serverCertificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let clientCertificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let engine = TransportEngine()
        let echoed = Mutex(0)
        // The server echoes every packet it decrypts back to its sender,
        // re-protected with its own keys.
        engine.onMedia = { [unowned engine] id, kind, buffer, _, transmit in
            let isRTCP = if case .rtcp = kind { true } else { false }
            let length =
                switch kind {
                case .rtp(let n), .rtcp(let n): n;
                case .handled: 0
                }
            if engine.sendRTP(UnsafeRawBufferPointer(rebasing: buffer[0..<length]), to: id, rtcp: isRTCP, transmit: transmit) {
                echoed.withLock { $0 += 1 }
            }
        }
        let worker = try UDPWorker(bindingTo: SocketAddress(ip: ip, port: 0)!, engine: engine)
        let thread = WorkerThread { worker.run() }
        defer { worker.requestStop(); thread.join() }

        let client = try UDPClient(certificate: clientCertificate, profiles: [profile], ip: ip)
        let serverCredentials = ICECredentials.random()
        let clientCredentials = client.transport.localCredentials
        let clientFingerprint = clientCertificate.fingerprint(.sha256)
        worker.mailbox.post { engine, now, _ in
            var configuration = PeerTransport.Configuration()
            configuration.dtls.srtpProfiles = [profile]
            guard
                let t = try? PeerTransport(
                    role: .server, certificate: serverCertificate, localCredentials: serverCredentials,
                    configuration: configuration, now: now)
            else { return }
            t.setRemoteParameters(credentials: clientCredentials, fingerprints: [clientFingerprint], now: now)
            engine.add(t, id: TransportID(1))
        }
        let now = MonotonicClock.now()
        client.transport.setRemoteParameters(
            credentials: serverCredentials,
            fingerprints: [serverCertificate.fingerprint(.sha256)], now: now)
        client.transport.addLocalCandidate(.host(client.local), now: now)
        client.transport.addRemoteCandidate(.host(worker.localAddress.transportAddress), now: now)

        try client.pump(for: .seconds(10)) { client.transport.state == .connected }
        #expect(client.transport.state == .connected)
        #expect(client.transport.srtpProfile == profile)

        let packets = (UInt16(1)...20).map {
            RTPBuilders.packet(sequenceNumber: $0, ssrc: 0xCAFE, payload: RTPBuilders.opusPayload(frameBytes: 80))
        }
        let reports = (0..<3).map { _ in RTCPBuilders.receiverReportWithCNAME(sender: SSRC(0xCAFE), cname: "loopback") }
        for p in packets { #expect(client.sendMedia(p)) }
        for r in reports { #expect(client.sendMedia(r, rtcp: true)) }
        try client.pump(for: .seconds(5)) { client.received.count == packets.count + reports.count }

        #expect(echoed.withLock { $0 } == packets.count + reports.count)
        let rtpBack = client.received.filter { if case .rtp = $0.kind { true } else { false } }.map(\.bytes)
        let rtcpBack = client.received.filter { if case .rtcp = $0.kind { true } else { false } }.map(\.bytes)
        #expect(Set(rtpBack) == Set(packets))
        #expect(rtcpBack == reports)
    }
}
