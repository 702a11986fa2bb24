import DTLS
import Foundation
import ICE
import MediaRouter
import MediaWorker
import Negotiation
import NetIO
import PeerSession
import RTP
import RTPStreams
import RoomProtocol
import Rooms
import SDP
import Synchronization
import Wire

/// One `UDPWorker<RoomMediaEngine>` on 127.0.0.1 and its thread, driven as
/// the rooms layer drives it: `MediaCommand`s through the mailbox.
final class RoomWorkerHarness {
    static let wallClock = NTPTimestamp(seconds: 3_900_000_000, fraction: 0x8000_0000)

    let certificate: DTLSCertificate
    let worker: UDPWorker<RoomMediaEngine>
    private let thread: WorkerThread
    /// What the engine reported to the rooms layer, in order.
    let events = MediaEventLog()

    init(configure: (inout RoomMediaEngine.Configuration) -> Void = { _ in }) throws {
        certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        var configuration = RoomMediaEngine.Configuration()
        configure(&configuration)
        let engine = RoomMediaEngine(
            certificate: certificate, workerIndex: 0, configuration: configuration, wallClock: { Self.wallClock })
        let events = self.events
        engine.onMediaEvent = { event in events.append(event) }
        let worker = try UDPWorker(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0)!, engine: engine)
        self.worker = worker
        thread = WorkerThread { worker.run() }
    }

    func stop() {
        worker.requestStop()
        thread.join()
    }

    func execute(_ command: MediaCommand) {
        worker.mailbox.post { engine, now, transmit in engine.execute(command, now: now, transmit: transmit) }
    }

    /// Runs `read` on the worker thread and waits (at most 2 s) for its
    /// answer: every command posted before has run by then.
    func query<T: Sendable>(_ read: @escaping @Sendable (RoomMediaEngine) -> T) -> T? {
        let answer = Mutex<T?>(nil)
        worker.mailbox.post { engine, _, _ in
            let value = read(engine)
            answer.withLock { $0 = value }
        }
        let end = Date().addingTimeInterval(2)
        while Date() < end {
            if let value = answer.withLock({ $0 }) { return value }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return nil
    }

    var counters: RoomMediaCounters? { query { $0.counters } }

    /// Opens the server transport of `participant` for `client` (the
    /// remote parameters in `openTransport`, or for a subscriber with a
    /// later `setRemote`, as the rooms layer does), and points the client
    /// at the worker. `claimedFingerprints` replaces what the client's SDP
    /// would say about its certificate.
    func open(
        _ client: UDPClient, room: String, participant: String, role: TransportRole,
        claimedFingerprints: [CertificateFingerprint]? = nil
    ) throws {
        try Self.open(
            client, room: room, participant: participant, role: role, claimedFingerprints: claimedFingerprints,
            certificate: certificate, worker: worker.localAddress.transportAddress, execute: execute)
    }

    /// `open` for any way of reaching the worker (this harness's mailbox,
    /// or a whole `MediaPlane`'s `post`).
    static func open(
        _ client: UDPClient, room: String, participant: String, role: TransportRole,
        claimedFingerprints: [CertificateFingerprint]? = nil, certificate: DTLSCertificate, worker: TransportAddress,
        execute: (MediaCommand) -> Void
    ) throws {
        let local = ICECredentials.random()
        var remote = try Self.remoteParameters(of: client)
        if let claimedFingerprints { remote.fingerprints = claimedFingerprints }
        let id = ParticipantID(participant)
        switch role {
        case .publisher:
            execute(.openTransport(room: room, worker: 0, participant: id, role: role, local: local, remote: remote))
        case .subscriber:
            execute(.openTransport(room: room, worker: 0, participant: id, role: role, local: local, remote: nil))
            execute(.setRemote(room: room, participant: id, role: role, remote: remote))
        }
        let now = MonotonicClock.now()
        client.transport.setRemoteParameters(
            credentials: local, fingerprints: [certificate.fingerprint(.sha256)], now: now)
        client.transport.addLocalCandidate(.host(client.local), now: now)
        client.transport.addRemoteCandidate(.host(worker), now: now)
    }

    /// Pumps `clients` until every one is connected (at most 5 s).
    func connect(_ clients: [UDPClient]) throws -> Bool {
        try UDPClient.pump(clients, for: .seconds(5)) { clients.allSatisfy(\.isConnected) }
        return clients.allSatisfy(\.isConnected)
    }

    /// What the client's SDP says about its transport, as `PublishOffer`
    /// or the subscriber answer gives it to the rooms layer.
    static func remoteParameters(of client: UDPClient) throws -> RemoteTransportParameters {
        let sdp = [
            "v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0",
            "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:0",
            "a=ice-ufrag:placeholder", "a=ice-pwd:placeholderplaceholder00",
            "a=fingerprint:sha-256 " + Array(repeating: "00", count: 32).joined(separator: ":"),
            "a=setup:actpass", "a=rtcp-mux", "a=sendrecv", "a=rtpmap:111 opus/48000/2", "",
        ].joined(separator: "\r\n")
        var parameters = try RemoteTransportParameters(from: SessionDescription.parse(sdp), as: .offer)
        parameters.credentials = client.transport.localCredentials
        parameters.fingerprints = [client.certificate.fingerprint(.sha256)]
        return parameters
    }
}

/// Published and outgoing track descriptions as `PublishOffer` and the
/// subscriber offer builder produce them.
enum Tracks {
    static let opus = PayloadType(rawValue: 111)!
    static let vp8 = PayloadType(rawValue: 96)!
    static let vp8RTX = PayloadType(rawValue: 97)!

    static func opusTrack(mid: MID = "0", ssrc: UInt32, audioLevelID: UInt8? = nil) -> PublishedTrackDescription {
        var extensions = HeaderExtensionIDs()
        extensions.audioLevel = audioLevelID
        return PublishedTrackDescription(
            mid: mid, kind: .audio, direction: .sendonly, msid: nil, codecs: [.opus(payloadType: opus)], simulcast: [],
            sources: SignalledSources(cname: "publisher", streams: [.init(ssrc: SSRC(ssrc))], isSimulcast: false),
            headerExtensions: extensions, reducedSizeRTCP: true)
    }

    /// VP8 with RTX; signalled SSRC, or (nil) recognised by mid and rid
    /// extensions with `rids` simulcast layers.
    static func vp8Track(
        mid: MID = "1", ssrc: UInt32? = nil, rids: [RID] = [], midID: UInt8 = 4, ridID: UInt8 = 10
    )
        -> PublishedTrackDescription
    {
        var extensions = HeaderExtensionIDs()
        extensions.mid = midID
        extensions.rtpStreamID = ridID
        return PublishedTrackDescription(
            mid: mid, kind: .video, direction: .sendonly, msid: nil,
            codecs: [.vp8(payloadType: vp8, rtxPayloadType: vp8RTX)], simulcast: rids.map { SimulcastLayer(rid: $0) },
            sources: ssrc.map { SignalledSources(cname: "publisher", streams: [.init(ssrc: SSRC($0))], isSimulcast: false) },
            headerExtensions: extensions, reducedSizeRTCP: true)
    }

    static func outgoing(_ codec: CodecDescription, kind: MediaKind, ssrc: UInt32, trackID: String) -> OutgoingTrack {
        OutgoingTrack(kind: kind, codec: codec, ssrc: SSRC(ssrc), streamID: "PA_pub", trackID: trackID, cname: "sfu")
    }
}

/// The media events a test engine reported, shared with its worker thread.
final class MediaEventLog: Sendable {
    private let events = Mutex<[MediaEvent]>([])
    func append(_ event: MediaEvent) { events.withLock { $0.append(event) } }
    var all: [MediaEvent] { events.withLock { $0 } }
}
