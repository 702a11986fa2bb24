import DTLS
import ICE
import MediaRouter
import MediaWorker
import Negotiation
import PeerSession
import RTCP
import RTP
import RTPStreams
import RoomProtocol
import Rooms
import SDP
import SFUTesting
import SRTP
import Wire

// The transmit queue's initializer is internal: a queue on descriptor -1
// whose batch the simulation empties after every engine call, so nothing
// ever reaches `sendmmsg` (the batch is sized to never fill in one call).
@testable import NetIO

/// A `RoomMediaEngine` and client-role `PeerTransport`s over seeded
/// `LossyLink`s on a virtual clock: no threads, no sockets. One publisher
/// sends a three-layer VP8 simulcast stream (SSRC group, RTX) and answers
/// NACKs with RTX and PLIs with keyframes; one subscriber NACKs its gaps,
/// sends transport-cc feedback, runs a `VP8DecoderModel` and sends a PLI
/// when the model is broken.
final class LossySimulation {
    static let room = "r1"
    static let trackID = "TR_v"
    static let outgoingSSRC = SSRC(0x7700)
    static let outgoingRTXSSRC = SSRC(0x7701)
    static let engineAddress = TransportAddress(ipv4: 10, 0, 0, 1, port: 3478)

    var clock = VirtualClock()
    let engine: RoomMediaEngine
    let transmit = TransmitQueue(descriptor: -1, capacity: 8192, slotSize: 2048)
    let publisher: SimulatedPublisher
    let subscriber: SimulatedSubscriber
    private(set) var events: [MediaEvent] = []
    /// When each of `events` was reported (virtual time).
    private(set) var eventTimes: [Instant] = []

    init(seed: UInt64) throws {
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let clientCertificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        engine = RoomMediaEngine(
            certificate: certificate, workerIndex: 0,
            wallClock: { NTPTimestamp(seconds: 3_900_000_000, fraction: 0) })
        let now = clock.now
        publisher = try SimulatedPublisher(
            address: TransportAddress(ipv4: 10, 0, 0, 2, port: 50000), certificate: clientCertificate, seed: seed, now: now)
        subscriber = try SimulatedSubscriber(
            address: TransportAddress(ipv4: 10, 0, 0, 3, port: 50000), certificate: clientCertificate, seed: seed &+ 1,
            now: now)
        engine.onMediaEvent = { [unowned self] event in
            events.append(event)
            eventTimes.append(clock.now)
        }

        for (client, participant, role) in [
            (publisher.peer, "PA_pub", TransportRole.publisher), (subscriber.peer, "PA_sub", .subscriber),
        ] {
            let local = ICECredentials(ufrag: participant, password: "lossy-simulation-password-" + participant)
            let remote = try Self.remoteParameters(of: client.transport, certificate: clientCertificate)
            execute(
                .openTransport(
                    room: Self.room, worker: 0, participant: ParticipantID(participant), role: role, local: local,
                    remote: remote))
            client.transport.setRemoteParameters(
                credentials: local, fingerprints: [certificate.fingerprint(.sha256)], now: now)
            client.transport.addLocalCandidate(.host(client.address), now: now)
            client.transport.addRemoteCandidate(.host(Self.engineAddress), now: now)
        }
        execute(
            .addIncomingTrack(
                room: Self.room, participant: ParticipantID("PA_pub"), trackID: Self.trackID,
                description: SimulatedPublisher.trackDescription))
        execute(
            .forward(
                room: Self.room, trackID: Self.trackID, subscriber: ParticipantID("PA_sub"),
                outgoing: OutgoingTrack(
                    kind: .video, codec: .vp8(payloadType: SimulatedPublisher.vp8, rtxPayloadType: SimulatedPublisher.rtx),
                    ssrc: Self.outgoingSSRC, rtxSSRC: Self.outgoingRTXSSRC, streamID: "PA_pub", trackID: Self.trackID,
                    cname: "sfu")))
    }

    func execute(_ command: MediaCommand) {
        engine.execute(command, now: clock.now, transmit: transmit)
        engine.transports.flushAll(output: transmit)
        drainEngine()
    }

    var peers: [SimulatedPeer] { [publisher.peer, subscriber.peer] }
    var counters: RoomMediaCounters { engine.counters }

    /// Runs until both clients are connected (loss-free links meanwhile).
    func connect(limit: Duration = .seconds(10)) -> Bool {
        let saved = peers.map { ($0.up.loss, $0.down.loss) }
        for p in peers {
            p.up.loss = nil
            p.down.loss = nil
        }
        defer { for (p, s) in zip(peers, saved) { (p.up.loss, p.down.loss) = s } }
        let end = clock.now + limit
        while clock.now < end {
            run(for: .milliseconds(10), media: false)
            if peers.allSatisfy({ $0.transport.state == .connected }) { return true }
        }
        return false
    }

    /// Moves time event by event until `clock.now + duration`.
    func run(for duration: Duration, media: Bool = true) {
        let end = clock.now + duration
        while true {
            var next: Instant? = engine.nextDeadline()
            func consider(_ t: Instant?) { if let t, next.map({ t < $0 }) ?? true { next = t } }
            for p in peers {
                consider(p.up.nextDelivery)
                consider(p.down.nextDelivery)
                consider(p.transport.nextDeadline)
            }
            if media {
                consider(publisher.nextFrame)
                consider(subscriber.nextTick)
            }
            guard let at = next, at <= end else { break }
            clock.advance(to: at)
            let now = clock.now
            for p in peers {
                while let d = p.up.receive(now: now) {
                    var bytes = d.bytes
                    bytes.withUnsafeMutableBytes { engine.receive($0, from: d.from, to: nil, now: now, transmit: transmit) }
                    drainEngine()
                }
                while let d = p.down.receive(now: now) { p.deliver(d, now: now) }
                if let t = p.transport.nextDeadline, t <= now { p.transport.handleTimeout(now: now) }
            }
            if let t = engine.nextDeadline(), t <= now {
                engine.timeout(now: now, transmit: transmit)
                drainEngine()
            }
            if media {
                if publisher.nextFrame <= now { publisher.sendFrame(now: now) }
                if subscriber.nextTick <= now { subscriber.tick(now: now) }
            }
            for p in peers { p.flush(now: now) }
        }
        clock.advance(to: end)
    }

    /// Moves what the engine queued onto the links towards the clients.
    private func drainEngine() {
        let batch = transmit.batch
        for i in 0..<batch.count {
            guard let to = batch.address(i)?.transportAddress, let peer = peers.first(where: { $0.address == to })
            else { continue }
            peer.down.send(Array(batch.datagram(i)), from: Self.engineAddress, to: to, now: clock.now)
        }
        batch.count = 0
    }

    /// The engine's counters as /metrics would show them, for the log.
    var recoverySummary: String {
        let c = counters
        return [
            "rtpIn=\(c.rtpPacketsIn)", "rtpOut=\(c.rtpPacketsOut)", "forwarded=\(c.forwarded)",
            "nacksReceived=\(c.nacksReceived)", "retransmissionsSent=\(c.retransmissionsSent)",
            "retransmissionsUnavailable=\(c.retransmissionsUnavailable)",
            "retransmissionsLimited=\(c.retransmissionsLimited)", "nacksSent=\(c.nacksSent)",
            "retransmissionsReceived=\(c.retransmissionsReceived)", "plisForwarded=\(c.plisForwarded)",
            "keyframeRequestsSuppressed=\(c.keyframeRequestsSuppressed)", "layerSwitches=\(c.layerSwitches)",
            "transportFeedbackSent=\(c.transportFeedbackSent)",
        ].joined(separator: " ")
    }

    /// What the client's SDP would tell the rooms layer of its transport.
    static func remoteParameters(
        of transport: PeerTransport, certificate: DTLSCertificate
    ) throws
        -> RemoteTransportParameters
    {
        let sdp = [
            "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
            "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=mid:0",
            "a=ice-ufrag:placeholder", "a=ice-pwd:placeholderplaceholder00",
            "a=fingerprint:sha-256 " + Array(repeating: "00", count: 32).joined(separator: ":"),
            "a=setup:actpass", "a=rtcp-mux", "a=sendrecv", "a=rtpmap:96 VP8/90000", "",
        ].joined(separator: "\r\n")
        var parameters = try RemoteTransportParameters(from: SessionDescription.parse(sdp), as: .offer)
        parameters.credentials = transport.localCredentials
        parameters.fingerprints = [certificate.fingerprint(.sha256)]
        return parameters
    }
}

/// A client-role transport and the two directions of its path to the
/// engine.
final class SimulatedPeer {
    let transport: PeerTransport
    let address: TransportAddress
    var up: LossyLink
    var down: LossyLink
    /// Decrypted media as it arrives.
    var onRTP: (([UInt8], Instant) -> Void)?
    var onRTCP: (([UInt8], Instant) -> Void)?

    init(address: TransportAddress, certificate: DTLSCertificate, now: Instant) throws {
        self.address = address
        var configuration = PeerTransport.Configuration()
        configuration.iceFull.randomSeed = 7
        transport = try PeerTransport(role: .client, certificate: certificate, configuration: configuration, now: now)
        up = LossyLink(delay: .milliseconds(100))
        down = LossyLink(delay: .milliseconds(100))
    }

    func deliver(_ d: LossyLink.Datagram, now: Instant) {
        var bytes = d.bytes
        let result = bytes.withUnsafeMutableBytes { transport.receive($0, from: d.from, to: d.to, now: now) }
        switch result {
        case .handled: break
        case .rtp(let n): onRTP?(Array(bytes[0..<n]), now)
        case .rtcp(let n): onRTCP?(Array(bytes[0..<n]), now)
        }
    }

    func flush(now: Instant) {
        while let out = transport.pollTransmit() { up.send(out.bytes, from: address, to: out.to, now: now) }
        while transport.pollEvent() != nil {}
    }

    /// Protects and sends one RTP packet or RTCP compound.
    @discardableResult
    func send(_ packet: [UInt8], rtcp: Bool, now: Instant) -> Bool {
        var buffer = packet + [UInt8](repeating: 0, count: SRTPSession.rtcpTrailerRoom)
        let result = buffer.withUnsafeMutableBytes { raw in
            rtcp ? transport.protectRTCP(raw, length: packet.count) : transport.protectRTP(raw, length: packet.count)
        }
        guard let result else { return false }
        up.send(Array(buffer[0..<result.length]), from: address, to: result.to, now: now)
        return true
    }
}
