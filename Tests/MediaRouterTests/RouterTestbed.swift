import DTLS
import ICE
import MediaRouter
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
import WorkerRelay

/// What a router wrote, kept in order: the in-memory `DatagramOutput` of
/// the router tests (no socket).
final class RecordingOutput: DatagramOutput {
    struct Datagram {
        var bytes: [UInt8]
        var to: TransportAddress
    }
    private(set) var datagrams: [Datagram] = []
    private var slot = [UInt8](repeating: 0, count: 2048)

    func send(to address: TransportAddress, from source: TransportAddress?, _ write: (UnsafeMutableRawBufferPointer) -> Int) {
        let n = slot.withUnsafeMutableBytes { write($0) }
        guard n > 0, n <= slot.count else { return }
        datagrams.append(Datagram(bytes: Array(slot[0..<n]), to: address))
    }

    func send(_ bytes: UnsafeRawBufferPointer, to address: TransportAddress, from source: TransportAddress?) {
        datagrams.append(Datagram(bytes: Array(bytes), to: address))
    }

    func take() -> [Datagram] {
        defer { datagrams.removeAll() }
        return datagrams
    }
}

/// One direction of one relay link between two routers, as a queue the
/// testbed drains by hand (a simulated ring): media and sender reports
/// from a source worker, or feedback from a far worker. `refuseNext`
/// makes the next media sends fail as a full ring does.
final class RelayRing: RelaySourceLink, RelayFeedbackLink {
    enum Message {
        case media(RelayTrackID, layer: Int, isRetransmission: Bool, packet: [UInt8])
        case senderReport(RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32)
        case layerBitrates(RelayTrackID, RelayedLayerBitrates)
        case feedback(RelayFeedback)
    }
    var messages: [Message] = []
    var refuseNext = 0
    private(set) var mediaCarried = 0
    /// Media messages carried, by spatial layer (0...3).
    private(set) var mediaCarriedPerLayer = [0, 0, 0, 0]
    private(set) var senderReportsCarried: [(layer: Int, ntp: UInt64, rtpTimestamp: UInt32)] = []
    private(set) var feedbackCarried: [RelayFeedback] = []
    private(set) var layerBitratesCarried: [RelayedLayerBitrates] = []

    func sendMedia(_ track: RelayTrackID, layer: Int, isRetransmission: Bool, packet: UnsafeRawBufferPointer) -> Bool {
        if refuseNext > 0 {
            refuseNext -= 1
            return false
        }
        mediaCarried += 1
        if mediaCarriedPerLayer.indices.contains(layer) { mediaCarriedPerLayer[layer] += 1 }
        messages.append(.media(track, layer: layer, isRetransmission: isRetransmission, packet: Array(packet)))
        return true
    }

    func sendSenderReport(_ track: RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32) -> Bool {
        senderReportsCarried.append((layer, ntp, rtpTimestamp))
        messages.append(.senderReport(track, layer: layer, ntp: ntp, rtpTimestamp: rtpTimestamp))
        return true
    }

    func sendLayerBitrates(_ track: RelayTrackID, _ rates: RelayedLayerBitrates) -> Bool {
        layerBitratesCarried.append(rates)
        messages.append(.layerBitrates(track, rates))
        return true
    }

    func sendFeedback(_ feedback: RelayFeedback) -> Bool {
        feedbackCarried.append(feedback)
        messages.append(.feedback(feedback))
        return true
    }

    func take() -> [Message] {
        defer { messages.removeAll() }
        return messages
    }
}

/// A client-role transport (ICE full agent, DTLS client, SRTP) of one
/// participant, talking to one router directly: what it receives is
/// decrypted and kept.
final class TestPeer {
    let transport: PeerTransport
    let address: TransportAddress
    let worker: Int
    /// Decrypted RTP packets, in arrival order.
    private(set) var rtp: [[UInt8]] = []
    /// Every SRTP datagram that arrived, before decryption (so a replayed
    /// index the receiver refuses is still here).
    private(set) var protectedRTP: [[UInt8]] = []
    /// Parsed RTCP packets received, with the virtual time they arrived.
    private(set) var rtcpArrivals: [(at: Instant, packet: RTCPPacket)] = []
    /// Parsed RTCP packets received.
    var rtcp: [RTCPPacket] { rtcpArrivals.map(\.packet) }
    /// Drop RTP packets whose sequence number is in it (loss on the
    /// router's link to this peer), once each.
    var loseSequenceNumbers: Set<UInt16> = []

    init(
        address: TransportAddress, worker: Int, certificate: DTLSCertificate, profiles: [SRTPProfile]? = nil, now: Instant
    ) throws {
        self.address = address
        self.worker = worker
        var configuration = PeerTransport.Configuration()
        configuration.iceFull.randomSeed = UInt64(address.port)
        if let profiles { configuration.dtls.srtpProfiles = profiles }
        transport = try PeerTransport(role: .client, certificate: certificate, configuration: configuration, now: now)
    }

    func deliver(_ datagram: [UInt8], from: TransportAddress, now: Instant) {
        // RFC 7983 / RFC 5761 section 4: RTP, not RTCP (PT 192...223).
        if datagram.count >= 12, (128...191).contains(datagram[0]), !(192...223).contains(datagram[1]) {
            protectedRTP.append(datagram)
        }
        var bytes = datagram
        let result = bytes.withUnsafeMutableBytes { transport.receive($0, from: from, to: address, now: now) }
        switch result {
        case .handled: break
        case .rtp(let n):
            let packet = Array(bytes[0..<n])
            if let header = try? RTPHeader(parsing: packet.span.bytes), loseSequenceNumbers.remove(header.sequenceNumber) != nil {
                return
            }
            rtp.append(packet)
        case .rtcp(let n):
            let packet = Array(bytes[0..<n])
            if let compound = try? RTCPCompoundPacket.parse(packet.span.bytes) {
                // Transport-cc feedback expanded, so tests read its statuses.
                rtcpArrivals += compound.expandedPackets(packet.span.bytes).map { (now, $0) }
            }
        }
    }

    /// PLIs received naming `ssrc`.
    func pictureLossIndications(for ssrc: SSRC) -> Int { pictureLossIndicationTimes(for: ssrc).count }

    /// When each PLI naming `ssrc` arrived.
    func pictureLossIndicationTimes(for ssrc: SSRC) -> [Instant] {
        rtcpArrivals.compactMap { a in
            if case .pictureLossIndication(let p) = a.packet, p.mediaSSRC == ssrc { a.at } else { nil }
        }
    }

    /// The SRs received, with their arrival times.
    var senderReports: [(at: Instant, report: SenderReport)] {
        rtcpArrivals.compactMap { a in if case .senderReport(let s) = a.packet { (a.at, s) } else { nil } }
    }

    /// The report blocks of the RRs received, in order.
    var receiverReportBlocks: [ReceptionReport] {
        rtcp.flatMap { p -> [ReceptionReport] in if case .receiverReport(let r) = p { r.reports } else { [] } }
    }

    /// The decrypted RTP packets' headers.
    var rtpHeaders: [RTPHeader] { rtp.compactMap { try? RTPHeader(parsing: $0.span.bytes) } }

    var nacks: [TransportLayerNACK] {
        rtcp.compactMap { if case .transportLayerNACK(let n) = $0 { n } else { nil } }
    }
}

/// Several `RoomRouter`s (one per simulated worker) on a virtual clock,
/// their peers and the relay rings between every pair of workers: no
/// socket, no thread. `pump()` moves everything in flight until nothing
/// moves (zero delay); `run(for:)` moves time in 5 ms steps.
final class RouterTestbed {
    /// What every router reads as the wall clock (the NTP time of its SRs).
    static let wallClock = NTPTimestamp(seconds: 3_900_000_000, fraction: 0)
    var clock = VirtualClock()
    let certificate: DTLSCertificate
    let clientCertificate: DTLSCertificate
    let routers: [RoomRouter]
    let outputs: [RecordingOutput]
    /// `media[a][b]`: worker a's packets to far worker b;
    /// `feedback[b][a]`: far worker b's feedback to source worker a.
    let media: [[RelayRing?]]
    let feedback: [[RelayRing?]]
    private(set) var peers: [TestPeer] = []
    private(set) var events: [[MediaEvent]]

    static func address(worker: Int) -> TransportAddress {
        TransportAddress(ipv4: 10, 0, 0, UInt8(worker + 1), port: 3478)
    }

    /// With `overNodeRelays`, the routers stand for nodes of a cluster:
    /// no rings; each pair talks over a DTLS-SRTP relay transport (slot b
    /// is router b) whose datagrams `pump()` carries between them, where
    /// `dropRelayDatagrams` drops the next ones from a router.
    let overNodeRelays: Bool
    var dropRelayDatagrams: [Int: Int] = [:]
    /// Relay datagrams carried between routers (node relays only).
    private(set) var relayDatagrams = 0
    /// With nodes of several workers (`init(nodes:workersPerNode:)`), the
    /// workers each node has; nil when each router is a node or a worker
    /// of the one node.
    let workersPerNode: Int?

    /// The index router `r` has among its node's workers (what its
    /// commands and relay slots name).
    func workerIndex(ofRouter r: Int) -> Int { workersPerNode.map { r % $0 } ?? r }

    /// Whether routers `a` and `b` are workers of one node (a ring joins them).
    func shareANode(_ a: Int, _ b: Int) -> Bool {
        guard let n = workersPerNode else { return !overNodeRelays }
        return a / n == b / n
    }

    /// The relay slot of node `m` in a node of `workersPerNode` workers:
    /// past them, as the media plane gives it.
    static func nodeSlot(of m: Int, workersPerNode: Int) -> Int { workersPerNode + m }

    /// `nodes` nodes of `workersPerNode` workers each: router
    /// `n * workersPerNode + w` is worker w of node n. One node's workers
    /// are joined by rings; each pair of nodes by a DTLS-SRTP relay
    /// transport between their first workers (`node-<m>` at slot
    /// `nodeSlot(of: m)`), as the media plane keeps them.
    convenience init(nodes: Int, workersPerNode: Int) throws {
        try self.init(workers: nodes * workersPerNode, overNodeRelays: true, workersPerNode: workersPerNode)
    }

    init(
        workers: Int, overNodeRelays: Bool = false, workersPerNode: Int? = nil,
        configure: (inout RoomRouterConfiguration) -> Void = { _ in }
    ) throws {
        self.overNodeRelays = overNodeRelays
        self.workersPerNode = workersPerNode
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        self.certificate = certificate
        clientCertificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        var configuration = RoomRouterConfiguration()
        configure(&configuration)
        let index = { (r: Int) in workersPerNode.map { r % $0 } ?? r }
        routers = (0..<workers).map { w in
            RoomRouter(
                certificate: certificate, workerIndex: index(w), configuration: configuration,
                wallClock: { Self.wallClock })
        }
        outputs = (0..<workers).map { _ in RecordingOutput() }
        media = (0..<workers).map { a in (0..<workers).map { b in a == b ? nil : RelayRing() } }
        feedback = (0..<workers).map { a in (0..<workers).map { b in a == b ? nil : RelayRing() } }
        events = Array(repeating: [], count: workers)
        for w in 0..<workers {
            if let n = workersPerNode {
                // Indexed by the far worker's index in the node.
                let first = w - w % n
                routers[w].connectRelays(
                    sources: (first..<first + n).map { media[w][$0] }, feedback: (first..<first + n).map { feedback[w][$0] })
            } else if !overNodeRelays {
                routers[w].connectRelays(sources: media[w].map { $0 }, feedback: feedback[w].map { $0 })
            }
            routers[w].onMediaEvent = { [unowned self] in events[w].append($0) }
        }
        if let n = workersPerNode {
            for w in stride(from: 0, to: workers, by: n) {
                let node = w / n
                let links = (0..<workers / n).filter { $0 != node }.map { m in
                    NodeRelayLink(
                        node: "node-\(m)", isClient: node < m,
                        localCredentials: ICECredentials(ufrag: "n\(node)to\(m)", password: "node-relay-password-\(node)-\(m)"),
                        remoteCredentials: ICECredentials(ufrag: "n\(m)to\(node)", password: "node-relay-password-\(m)-\(node)"),
                        remoteFingerprint: certificate.fingerprint(.sha256), remote: Self.address(worker: m * n),
                        local: Self.address(worker: w), slot: Self.nodeSlot(of: m, workersPerNode: n))
                }
                routers[w].setNodeRelays(links, now: clock.now, output: outputs[w])
            }
        } else if overNodeRelays {
            for w in 0..<workers {
                let links = (0..<workers).filter { $0 != w }.map { b in
                    NodeRelayLink(
                        node: "node-\(b)", isClient: w < b,
                        localCredentials: ICECredentials(ufrag: "n\(w)to\(b)", password: "node-relay-password-\(w)-\(b)"),
                        remoteCredentials: ICECredentials(ufrag: "n\(b)to\(w)", password: "node-relay-password-\(b)-\(w)"),
                        remoteFingerprint: certificate.fingerprint(.sha256), remote: Self.address(worker: b),
                        local: Self.address(worker: w), slot: b)
                }
                routers[w].setNodeRelays(links, now: clock.now, output: outputs[w])
            }
        }
    }

    func execute(_ command: WorkerCommand, on worker: Int) {
        routers[worker].execute(command, now: clock.now, output: outputs[worker])
        routers[worker].flushAll(output: outputs[worker])
        pump()
    }

    func execute(_ command: MediaCommand, on worker: Int) { execute(.media(command), on: worker) }

    /// A participant's transport on `worker`, opened as the rooms layer
    /// would (a publisher's with its offer's parameters; a subscriber's
    /// first, its answer's parameters later by `setRemote`) and connected
    /// by `connect()`.
    /// `profiles` limits the SRTP profiles the peer offers in DTLS.
    func addPeer(
        _ participant: String, role: TransportRole, room: String, worker: Int, profiles: [SRTPProfile]? = nil,
        egressHeaderExtensions: HeaderExtensionIDs? = nil
    ) throws -> TestPeer {
        let peer = try TestPeer(
            address: TransportAddress(ipv4: 10, 1, UInt8(worker), UInt8(peers.count + 1), port: 50000), worker: worker,
            certificate: clientCertificate, profiles: profiles, now: clock.now)
        peers.append(peer)
        let local = ICECredentials(ufrag: participant, password: "router-testbed-password-" + participant)
        let id = ParticipantID(participant)
        var remote = try Self.remoteParameters(of: peer.transport, certificate: clientCertificate)
        remote.egressHeaderExtensions = egressHeaderExtensions
        switch role {
        case .publisher:
            execute(
                .openTransport(
                    room: room, worker: workerIndex(ofRouter: worker), participant: id, role: role, local: local,
                    remote: remote), on: worker)
        case .subscriber where egressHeaderExtensions != nil:
            // As for a WHEP viewer: its offer came first.
            execute(
                .openTransport(
                    room: room, worker: workerIndex(ofRouter: worker), participant: id, role: role, local: local,
                    remote: remote), on: worker)
        case .subscriber:
            execute(
                .openTransport(
                    room: room, worker: workerIndex(ofRouter: worker), participant: id, role: role, local: local, remote: nil),
                on: worker)
            execute(.setRemote(room: room, participant: id, role: role, remote: remote), on: worker)
        }
        peer.transport.setRemoteParameters(credentials: local, fingerprints: [certificate.fingerprint(.sha256)], now: clock.now)
        peer.transport.addLocalCandidate(.host(peer.address), now: clock.now)
        peer.transport.addRemoteCandidate(.host(Self.address(worker: worker)), now: clock.now)
        return peer
    }

    /// Runs until every peer is connected.
    func connect(limit: Duration = .seconds(10)) -> Bool {
        let end = clock.now + limit
        while clock.now < end {
            run(for: .milliseconds(10))
            let relaysUp = routers.indices.allSatisfy { r in
                guard overNodeRelays else { return true }
                // Each node's first worker holds its relays to the others.
                guard let n = workersPerNode else { return routers[r].nodeRelayCounts.connected == routers.count - 1 }
                return routers[r].nodeRelayCounts.connected == (r % n == 0 ? routers.count / n - 1 : 0)
            }
            if relaysUp, peers.allSatisfy({ $0.transport.state == .connected }) { return true }
        }
        return false
    }

    /// Protects and sends one RTP packet (or RTCP compound) from `peer`;
    /// `pump` false leaves what it caused in flight (two peers' packets
    /// then reach the routers before either's answers move).
    func send(_ packet: [UInt8], from peer: TestPeer, rtcp: Bool = false, pump: Bool = true) {
        var buffer = packet + [UInt8](repeating: 0, count: SRTPSession.rtcpTrailerRoom)
        let result = buffer.withUnsafeMutableBytes { raw in
            rtcp ? peer.transport.protectRTCP(raw, length: packet.count) : peer.transport.protectRTP(raw, length: packet.count)
        }
        guard let result else { return }
        deliver(Array(buffer[0..<result.length]), from: peer)
        if pump { self.pump() }
    }

    private func deliver(_ bytes: [UInt8], from peer: TestPeer) {
        var datagram = bytes
        datagram.withUnsafeMutableBytes {
            routers[peer.worker].receive($0, from: peer.address, to: nil, now: clock.now, output: outputs[peer.worker])
        }
    }

    /// Moves datagrams and relay messages until nothing is in flight.
    func pump() {
        var moved = true
        while moved {
            moved = false
            for w in routers.indices {
                for d in outputs[w].take() {
                    moved = true
                    if overNodeRelays, let b = routers.indices.first(where: { $0 != w && Self.address(worker: $0) == d.to }) {
                        if let n = dropRelayDatagrams[w], n > 0 {
                            dropRelayDatagrams[w] = n - 1
                            continue
                        }
                        relayDatagrams += 1
                        var bytes = d.bytes
                        bytes.withUnsafeMutableBytes {
                            routers[b].receive($0, from: Self.address(worker: w), to: nil, now: clock.now, output: outputs[b])
                        }
                        continue
                    }
                    peers.first { $0.address == d.to && $0.worker == w }?.deliver(
                        d.bytes, from: Self.address(worker: w), now: clock.now)
                }
            }
            for p in peers {
                while let out = p.transport.pollTransmit() {
                    moved = true
                    deliver(out.bytes, from: p)
                }
                while p.transport.pollEvent() != nil {}
            }
            for a in routers.indices {
                for b in routers.indices where a != b && shareANode(a, b) {
                    let (fromA, fromB) = (workerIndex(ofRouter: a), workerIndex(ofRouter: b))
                    for m in media[a][b]?.take() ?? [] {
                        moved = true
                        switch m {
                        case .media(let relay, let layer, let isRetransmission, let packet):
                            packet.withUnsafeBytes {
                                routers[b].receiveRelayedMedia(
                                    relay, layer: layer, isRetransmission: isRetransmission, packet: $0, from: fromA,
                                    now: clock.now, output: outputs[b])
                            }
                        case .senderReport(let relay, let layer, let ntp, let rtp):
                            routers[b].receiveRelayedSenderReport(
                                relay, layer: layer, ntp: ntp, rtpTimestamp: rtp, from: fromA, now: clock.now)
                        case .layerBitrates(let relay, let rates):
                            routers[b].receiveRelayedLayerBitrates(relay, rates, from: fromA, now: clock.now)
                        case .feedback: break
                        }
                    }
                    for m in feedback[b][a]?.take() ?? [] {
                        moved = true
                        if case .feedback(let f) = m {
                            routers[a].receiveRelayFeedback(f, from: fromB, now: clock.now, output: outputs[a])
                        }
                    }
                }
            }
        }
    }

    /// Moves time in `step`s: timers of routers and peers, then `each`.
    func run(for duration: Duration, step: Duration = .milliseconds(5), each: (Instant) -> Void = { _ in }) {
        let end = clock.now + duration
        while clock.now < end {
            clock.advance(by: step)
            let now = clock.now
            for w in routers.indices {
                if let d = routers[w].nextDeadline(), d <= now { routers[w].timeout(now: now, output: outputs[w]) }
            }
            for p in peers {
                if let d = p.transport.nextDeadline, d <= now { p.transport.handleTimeout(now: now) }
            }
            pump()
            each(now)
            pump()
        }
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

/// A single-layer VP8 publisher's track (signalled SSRC and RTX SSRC),
/// the packets it sends, and the outgoing track a subscriber gets.
enum TestTrack {
    static let vp8 = PayloadType(rawValue: 96)!
    static let rtx = PayloadType(rawValue: 97)!
    static let mediaSSRC: UInt32 = 0x1000_0001
    static let rtxSSRC: UInt32 = 0x2000_0001
    static let outgoingSSRC = SSRC(0x7700)
    static let outgoingRTXSSRC = SSRC(0x7701)

    static var description: PublishedTrackDescription {
        PublishedTrackDescription(
            mid: "0", kind: .video, direction: .sendonly, msid: nil, codecs: [.vp8(payloadType: vp8, rtxPayloadType: rtx)],
            simulcast: [],
            sources: SignalledSources(
                cname: "publisher", streams: [.init(ssrc: SSRC(mediaSSRC), rtxSSRC: SSRC(rtxSSRC))], isSimulcast: false),
            headerExtensions: HeaderExtensionIDs(), reducedSizeRTCP: true)
    }

    static func stream() -> SimulcastStream {
        SimulcastStream(layers: [.init(ssrc: mediaSSRC)], keyframeInterval: 30, temporalPattern: [0])
    }

    static func outgoing(trackID: String, publisher: String) -> OutgoingTrack {
        OutgoingTrack(
            kind: .video, codec: .vp8(payloadType: vp8, rtxPayloadType: rtx), ssrc: outgoingSSRC, rtxSSRC: outgoingRTXSSRC,
            streamID: publisher, trackID: trackID, cname: "sfu")
    }
}

extension TestTrack {
    static let opus = PayloadType(rawValue: 111)!

    /// An Opus publisher's track on a signalled SSRC, with the audio-level
    /// extension (RFC 6464) under `audioLevelID` when given.
    static func opusDescription(mid: MID = "0", ssrc: UInt32, audioLevelID: UInt8? = nil) -> PublishedTrackDescription {
        var ids = HeaderExtensionIDs()
        ids.audioLevel = audioLevelID
        return PublishedTrackDescription(
            mid: mid, kind: .audio, direction: .sendonly, msid: nil, codecs: [.opus(payloadType: opus)], simulcast: [],
            sources: SignalledSources(cname: "publisher", streams: [.init(ssrc: SSRC(ssrc))], isSimulcast: false),
            headerExtensions: ids, reducedSizeRTCP: true)
    }

    /// VP8 with RTX recognised by its mid and rid extensions (ids `midID`,
    /// `ridID`), `rids` simulcast layers in `a=simulcast` order; or, with
    /// `ssrc`, one signalled layer.
    static func vp8Description(
        mid: MID = "1", ssrc: UInt32? = nil, rtxSSRC: UInt32? = nil, rids: [RID] = [], midID: UInt8 = 4, ridID: UInt8 = 10
    ) -> PublishedTrackDescription {
        var ids = HeaderExtensionIDs()
        ids.mid = midID
        ids.rtpStreamID = ridID
        return PublishedTrackDescription(
            mid: mid, kind: .video, direction: .sendonly, msid: nil, codecs: [.vp8(payloadType: vp8, rtxPayloadType: rtx)],
            simulcast: rids.map { SimulcastLayer(rid: $0) },
            sources: ssrc.map {
                SignalledSources(
                    cname: "publisher", streams: [.init(ssrc: SSRC($0), rtxSSRC: rtxSSRC.map { SSRC($0) })], isSimulcast: false)
            },
            headerExtensions: ids, reducedSizeRTCP: true)
    }

    /// What a subscriber gets of track `trackID`: `codec` on `ssrc` (and
    /// `rtxSSRC` where given).
    static func outgoing(
        _ codec: CodecDescription, kind: MediaKind, ssrc: UInt32, rtxSSRC: UInt32? = nil, trackID: String,
        publisher: String = "PA_pub"
    ) -> OutgoingTrack {
        OutgoingTrack(
            kind: kind, codec: codec, ssrc: SSRC(ssrc), rtxSSRC: rtxSSRC.map { SSRC($0) }, streamID: publisher, trackID: trackID,
            cname: "sfu")
    }
}
