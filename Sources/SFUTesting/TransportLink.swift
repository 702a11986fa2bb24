import DTLS
import ICE
import PeerSession
import SRTP
import Wire

/// A server-role and a client-role `PeerTransport` wired together over an
/// `InMemoryNetwork` on a `VirtualClock`: the fixture for every test that
/// needs a connected peer without sockets. `run(for:)` moves time from one
/// event (datagram delivery or deadline) to the next; media that arrives
/// decrypted is collected per side.
package final class TransportLink {
    package var clock = VirtualClock()
    package var network: InMemoryNetwork
    package let server: PeerTransport
    package let client: PeerTransport
    package let serverCertificate: DTLSCertificate
    package let clientCertificate: DTLSCertificate
    /// Where each side lives; the client's address can move (handover).
    package let serverAddress = TransportAddress(ipv4: 10, 0, 0, 1, port: 10000)
    package private(set) var clientAddress = TransportAddress(ipv4: 10, 0, 0, 2, port: 50000)

    package private(set) var serverEvents: [PeerTransportEvent] = []
    package private(set) var clientEvents: [PeerTransportEvent] = []
    /// Decrypted media as (kind, bytes) in arrival order.
    package private(set) var serverReceived: [(kind: ReceivedDatagram, bytes: [UInt8])] = []
    package private(set) var clientReceived: [(kind: ReceivedDatagram, bytes: [UInt8])] = []

    /// - Parameters:
    ///   - serverProfiles / clientProfiles: the SRTP profiles each side offers.
    ///   - clientFingerprintOverride: what the server is told the client's
    ///     fingerprint is (a wrong one makes DTLS fail).
    package init(
        network: InMemoryNetwork = InMemoryNetwork(), serverProfiles: [SRTPProfile] = SRTPProfile.defaultPreference,
        clientProfiles: [SRTPProfile] = SRTPProfile.defaultPreference,
        clientFingerprintOverride: CertificateFingerprint? = nil,
        serverMaxInboundSSRCs: Int = PeerTransport.defaultMaxInboundSSRCs
    ) throws {
        self.network = network
        let start = clock.now
        serverCertificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        clientCertificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        var serverConfiguration = PeerTransport.Configuration()
        serverConfiguration.dtls.srtpProfiles = serverProfiles
        serverConfiguration.maxInboundSSRCs = serverMaxInboundSSRCs
        var clientConfiguration = PeerTransport.Configuration()
        clientConfiguration.dtls.srtpProfiles = clientProfiles
        clientConfiguration.iceFull.randomSeed = 7
        server = try PeerTransport(role: .server, certificate: serverCertificate, configuration: serverConfiguration, now: start)
        client = try PeerTransport(role: .client, certificate: clientCertificate, configuration: clientConfiguration, now: start)

        // Signalling, as the SDP offer/answer would carry it.
        server.setRemoteParameters(
            credentials: client.localCredentials,
            fingerprints: [clientFingerprintOverride ?? clientCertificate.fingerprint(.sha256)], now: start)
        client.setRemoteParameters(
            credentials: server.localCredentials,
            fingerprints: [serverCertificate.fingerprint(.sha256)], now: start)
        client.addLocalCandidate(.host(clientAddress), now: start)
        client.addRemoteCandidate(.host(serverAddress), now: start)
        flush()
    }

    /// The client moves to a new address (network handover): a new local
    /// candidate appears, the old interface goes away and is unreachable.
    package func moveClient(to address: TransportAddress) {
        let old = clientAddress
        clientAddress = address
        client.addLocalCandidate(.host(address), now: clock.now)
        client.removeLocalCandidate(old, now: clock.now)
        network.blocked.insert(old)
        flush()
    }

    /// Runs the simulation until `clock.now + duration`.
    package func run(for duration: Duration) {
        let end = clock.now + duration
        while true {
            flush()
            let candidates = [network.nextDelivery, server.nextDeadline, client.nextDeadline].compactMap { $0 }
            guard let next = candidates.min(), next <= end else { break }
            clock.advance(to: next)
            let now = clock.now
            while let d = network.receive(now: now) { deliver(d, now: now) }
            if let t = server.nextDeadline, t <= now { server.handleTimeout(now: now) }
            if let t = client.nextDeadline, t <= now { client.handleTimeout(now: now) }
        }
        clock.advance(to: end)
    }

    /// Runs until both sides report `.connected`, at most `limit`.
    @discardableResult
    package func connect(limit: Duration = .seconds(10)) -> Bool {
        let end = clock.now + limit
        while clock.now < end {
            run(for: .milliseconds(10))
            if server.state == .connected, client.state == .connected { return true }
            if server.state == .failed || client.state == .failed { return false }
        }
        return false
    }

    /// Protects `packet` on `from` and sends it through the network; false
    /// when the transport has no route.
    @discardableResult
    package func sendMedia(_ packet: [UInt8], rtcp: Bool = false, from side: PeerTransport.Role) -> Bool {
        let transport = side == .server ? server : client
        var buffer = packet + [UInt8](repeating: 0, count: SRTPSession.rtcpTrailerRoom)
        let result = buffer.withUnsafeMutableBytes { raw in
            rtcp ? transport.protectRTCP(raw, length: packet.count) : transport.protectRTP(raw, length: packet.count)
        }
        guard let result else { return false }
        network.send(
            Array(buffer[0..<result.length]), from: side == .server ? serverAddress : clientAddress,
            to: result.to, now: clock.now)
        return true
    }

    private func deliver(_ d: InMemoryNetwork.Datagram, now: Instant) {
        let transport: PeerTransport
        if d.to == serverAddress { transport = server } else if d.to == clientAddress { transport = client } else { return }
        var bytes = d.bytes
        let result = bytes.withUnsafeMutableBytes { transport.receive($0, from: d.from, to: d.to, now: now) }
        switch result {
        case .handled: break
        case .rtp(let n), .rtcp(let n):
            let entry = (kind: result, bytes: Array(bytes[0..<n]))
            if transport === server { serverReceived.append(entry) } else { clientReceived.append(entry) }
        }
        flush()
    }

    /// Sends what both transports queued and collects their events.
    private func flush() {
        let now = clock.now
        while let out = server.pollTransmit() { network.send(out.bytes, from: serverAddress, to: out.to, now: now) }
        while let out = client.pollTransmit() { network.send(out.bytes, from: out.from ?? clientAddress, to: out.to, now: now) }
        while let e = server.pollEvent() { serverEvents.append(e) }
        while let e = client.pollEvent() { clientEvents.append(e) }
    }
}
