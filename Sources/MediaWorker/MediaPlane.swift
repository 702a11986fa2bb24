import DTLS
import Foundation
import ICE
import MediaRouter
import NetIO
import RTPStreams
import RoomProtocol
import Rooms
import Synchronization
import Wire

/// The media workers of one server: one thread, one UDP port and one
/// `RoomMediaEngine` each. The rooms layer's `MediaCommand`s arrive from
/// the signalling thread through `post`, which hands each to the worker
/// that owns the command's room, through that worker's mailbox.
package final class MediaPlane: Sendable {
    package let certificate: DTLSCertificate
    /// What the rooms layer puts in SDP: our fingerprint and each worker's
    /// candidates.
    package let endpoint: MediaEndpoint
    /// Internal for tests that block a worker on purpose.
    let workers: [UDPWorker<RoomMediaEngine>]
    private let threads: [WorkerThread]
    /// Each worker's published snapshot, read by `/metrics`.
    let cells: [WorkerSnapshotCell]
    /// The rooms' fan-out over workers (MediaPlane+Relays).
    let planner: Mutex<RoomSpanPlanner>
    /// The rings between workers (MediaPlane+Relays).
    let relays: RelayMesh
    let failureHandler = TransportFailureHandler()
    let eventHandler = MediaEventHandler()
    /// Worker reports on their way to the signalling side.
    let events = Mailbox<WorkerReport>()
    let delivering = DeliveryFlag()
    private let delivery: WorkerThread

    /// Relay slots of peer nodes (MediaPlane+NodeRelays).
    let nodeRelaySlots = Mutex<[String: Int]>([:])
    /// The rings to the recorder, once recording is on (MediaPlane+Recorder).
    let recorderRings = Mutex<RecorderRings?>(nil)
    /// Cascade commands naming a node without a relay slot (ignored).
    let nodeCommandsWithoutSlot = Atomic<Int>(0)

    /// What the workers announce, and the warnings about it.
    package let addresses: MediaAddresses

    /// Binds `count` workers on `bindIP`, on `firstPort`, `firstPort + 1`,
    /// ... (0: any free ports), and chooses what their candidates announce
    /// (`MediaAddresses.choose`): `announcedIP` (the public address behind
    /// NAT) if given, else the bound address, else, bound to a wildcard,
    /// every usable address of `interfaces` (nil: the machine's, from
    /// getifaddrs). `::` receives both families; where the kernel has no
    /// IPv6 at all it falls back to `0.0.0.0`. With `tcpFirstPort` each
    /// worker also listens for ICE-TCP (RFC 6544) on the same address, TCP
    /// port `tcpFirstPort + i` (0: any free ports), and its candidates add
    /// a passive TCP one per announced address.
    package init(
        count: Int, bindIP: String, firstPort: UInt16, announcedIP: String? = nil, announceLinkLocal: Bool = false,
        interfaces: [InterfaceAddress]? = nil, certificate: DTLSCertificate,
        configuration: RoomMediaEngine.Configuration = .init(), tcpFirstPort: UInt16? = nil,
        tcpLimits: ICETCPLimits = .init(), udpGSO: Bool = true, socketBuffers: UDPSocketBuffers? = .standard
    ) throws(MediaPlaneError) {
        self.certificate = certificate
        var announce: TransportAddress?
        if let announcedIP {
            guard let a = SocketAddress(ip: announcedIP, port: 0) else {
                throw .bind(SocketError(operation: "address \(announcedIP)", errno: EINVAL))
            }
            announce = a.transportAddress
        }
        var bindIP = bindIP
        var workers: [UDPWorker<RoomMediaEngine>] = []
        var cells: [WorkerSnapshotCell] = []
        var engines: [RoomMediaEngine] = []
        for i in 0..<max(1, count) {
            let port = firstPort == 0 ? 0 : firstPort + UInt16(i)
            let tcpPort = tcpFirstPort.map { $0 == 0 ? 0 : $0 + UInt16(i) }
            let engine = RoomMediaEngine(
                certificate: certificate, workerIndex: i, configuration: configuration,
                wallClock: { MediaPlane.wallClock() })
            cells.append(engine.snapshots)
            engines.append(engine)
            // Workers never call into the signalling side: their reports
            // go through a mailbox that `delivery` drains (MediaPlane+Events).
            let outbox = events
            engine.onTransportEvent = { participant, role, event in
                switch event {
                case .failed: outbox.post(.transportFailed(participant, role, failed: true))
                case .closed: outbox.post(.transportFailed(participant, role, failed: false))
                default: break
                }
            }
            engine.onMediaEvent = { outbox.post(.media($0)) }
            do {
                workers.append(
                    try Self.bind(
                        bindIP, port: port, tcpPort: tcpPort, limits: tcpLimits, udpGSO: udpGSO, buffers: socketBuffers,
                        engine: engine))
            } catch let error where i == 0 && bindIP == "::" && error.errno == EAFNOSUPPORT {
                bindIP = "0.0.0.0"
                do {
                    workers.append(
                        try Self.bind(
                            bindIP, port: port, tcpPort: tcpPort, limits: tcpLimits, udpGSO: udpGSO, buffers: socketBuffers,
                            engine: engine))
                } catch { throw .bind(error) }
            } catch {
                throw .bind(error)
            }
            engine.iceTCPPort = workers.last?.tcpPort
        }
        let addresses: MediaAddresses
        do {
            addresses = try MediaAddresses.choose(
                bind: workers[0].localAddress.transportAddress, dualStack: workers[0].isDualStack, announce: announce,
                interfaces: interfaces ?? NetworkInterfaces.current(), includeLinkLocal: announceLinkLocal)
        } catch {
            throw .addresses(error)
        }
        self.addresses = addresses
        self.workers = workers
        self.cells = cells
        let candidates = workers.map { worker in
            addresses.candidates(port: worker.localAddress.port)
                + (worker.tcpPort.map { addresses.tcpCandidates(port: $0.localAddress.port) } ?? [])
        }
        endpoint = MediaEndpoint(fingerprint: certificate.fingerprint(.sha256), workers: candidates)
        planner = Mutex(RoomSpanPlanner(workers: workers.count))
        relays = RelayMesh(workers: workers.count)
        Self.connect(relays, workers, engines: engines)
        threads = workers.enumerated().map { i, worker in WorkerThread(name: "media-\(i)") { worker.run() } }
        let (events, flag, failures, reports) = (events, delivering, failureHandler, eventHandler)
        delivery = WorkerThread(name: "media-events") { Self.deliver(events, while: flag, failures: failures, reports: reports) }
    }

    private static func bind(
        _ ip: String, port: UInt16, tcpPort: UInt16?, limits: ICETCPLimits, udpGSO: Bool, buffers: UDPSocketBuffers?,
        engine: RoomMediaEngine
    ) throws(SocketError)
        -> UDPWorker<RoomMediaEngine>
    {
        guard let address = SocketAddress(ip: ip, port: port) else {
            throw SocketError(operation: "address \(ip)", errno: EINVAL)
        }
        let tcp = tcpPort.flatMap { SocketAddress(ip: ip, port: $0) }.map { (address: $0, limits: limits) }
        return try UDPWorker(bindingTo: address, engine: engine, tcp: tcp, udpGSO: udpGSO, buffers: buffers)
    }

    /// Every worker's UDP send counters (UDP GSO, sendmmsg calls), as last
    /// flushed; any thread.
    package func udpSends() -> [UDPSegmentation] { workers.map(\.sendCounters.snapshot) }
    /// Each worker's receive-to-send delay histogram (any thread; atomics only).
    package func workerDelays() -> [DurationHistogram] { workers.map(\.delayHistogram) }
    /// Each worker's UDP socket buffers as the kernel set them (nil: its
    /// defaults).
    package var socketBuffers: [UDPSocketBuffers?] { workers.map(\.socketBuffers) }
    /// Each worker's datagrams dropped with its socket's receive buffer
    /// full (any thread; nil where the kernel does not say).
    package func receiveBufferDrops() -> [UInt64?] { workers.map(\.receiveBufferDrops) }

    package var localAddresses: [SocketAddress] { workers.map(\.localAddress) }
    /// Each worker's ICE-TCP listening address (empty without ICE-TCP).
    package var tcpAddresses: [SocketAddress] { workers.compactMap { $0.tcpPort?.localAddress } }

    /// Called on the plane's delivery thread (never a worker's) when a
    /// participant's transport fails (ICE, consent, DTLS) or the peer
    /// closes it; the rooms layer removes WHIP and WHEP participants then
    /// (`RoomService.transportFailed`). Set once the signalling side exists.
    package func onTransportFailed(_ handler: @escaping @Sendable (ParticipantID, TransportRole) -> Void) {
        failureHandler.handler.withLock { $0 = { participant, role, _ in handler(participant, role) } }
    }

    /// `onTransportFailed` that also says whether the transport failed
    /// (true) or the peer closed it with a DTLS close_notify (false: a
    /// client leaving, not worth a warning).
    package func onTransportEnded(_ handler: @escaping @Sendable (ParticipantID, TransportRole, _ failed: Bool) -> Void) {
        failureHandler.handler.withLock { $0 = handler }
    }

    /// Called on the plane's delivery thread (never a worker's) with what
    /// the rooms layer must tell participants (active speakers, dynacast
    /// layers, stream state; `RoomService.mediaEvent`). Set once the
    /// signalling side exists.
    package func onMediaEvent(_ handler: @escaping @Sendable (MediaEvent) -> Void) {
        eventHandler.handler.withLock { $0 = handler }
    }

    /// Any thread: runs `command` on the workers that hold a part of its
    /// room (`postPlanned`).
    package func post(_ command: MediaCommand) { postPlanned(command) }

    /// Every worker's counters, as last published (`snapshots`).
    package func counters() -> [RoomMediaCounters] { snapshots().map(\.counters) }

    /// Every worker's last published snapshot (`WorkerSnapshotCell`): at
    /// most `RoomMediaEngine.snapshotInterval` old, read without posting to
    /// the workers, so a busy or stuck worker never holds up `/metrics`.
    /// A worker that has published nothing yet counts as empty.
    package func snapshots() -> [WorkerSnapshot] {
        cells.map { $0.read() ?? WorkerSnapshot(counters: RoomMediaCounters(), transports: 0, tracks: 0, subscriptions: 0) }
    }

    /// The drain's end: each worker closes every transport it holds (DTLS
    /// close_notify) and hands those datagrams to the kernel before it
    /// answers, so they leave even if the process exits right after.
    /// Waits up to `timeout` for each worker; returns the transports closed.
    @discardableResult
    package func closeAllTransports(timeout: Duration = .milliseconds(500)) -> Int {
        var closed = 0
        for worker in workers {
            let answer = Mutex<Int?>(nil)
            worker.mailbox.post { engine, now, transmit in
                let n = engine.closeAllTransports(now: now, transmit: transmit)
                transmit.flush()
                answer.withLock { $0 = n }
            }
            let end = MonotonicClock.now() + timeout
            while MonotonicClock.now() < end {
                if let n = answer.withLock({ $0 }) {
                    closed += n
                    break
                }
                usleep(1000)
            }
        }
        return closed
    }

    package func stop() {
        for worker in workers { worker.requestStop() }
        for thread in threads { thread.join() }
        stopDelivery()
        delivery.join()
    }

    /// NTP time for Sender Reports, from the system's wall clock.
    static func wallClock() -> NTPTimestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return NTPTimestamp(sinceUnixEpoch: .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec)))
    }
}

/// Why the media plane could not start.
package enum MediaPlaneError: Error, CustomStringConvertible {
    /// A media port could not be bound.
    case bind(SocketError)
    /// Nothing a client could reach would be announced.
    case addresses(MediaAddresses.Failure)

    package var description: String {
        switch self {
        case .bind(let e): "cannot bind the media ports: \(e)"
        case .addresses(let f): "no media address to announce: \(f)"
        }
    }
}
