import DTLS
import Foundation
import ICE
import NetIO
import RTPStreams
import Rooms
import Synchronization
import Wire

/// The media workers of one server: one thread, one UDP port and one
/// `RoomMediaEngine` each. The rooms layer's `MediaCommand`s arrive from
/// the signalling thread through `post`, which hands each to the worker
/// that owns the command's room, through that worker's mailbox.
public final class MediaPlane: Sendable {
    public let certificate: DTLSCertificate
    /// What the rooms layer puts in SDP: our fingerprint and each worker's
    /// candidates.
    public let endpoint: MediaEndpoint
    private let workers: [UDPWorker<RoomMediaEngine>]
    private let threads: [WorkerThread]
    private let roomWorkers = Mutex<[String: Int]>([:])
    private let failureHandler = TransportFailureHandler()
    private let eventHandler = MediaEventHandler()

    /// What the workers announce, and the warnings about it.
    public let addresses: MediaAddresses

    /// Binds `count` workers on `bindIP`, on `firstPort`, `firstPort + 1`,
    /// ... (0: any free ports), and chooses what their candidates announce
    /// (`MediaAddresses.choose`): `announcedIP` (the public address behind
    /// NAT) if given, else the bound address, else, bound to a wildcard,
    /// every usable address of `interfaces` (nil: the machine's, from
    /// getifaddrs). `::` receives both families; where the kernel has no
    /// IPv6 at all it falls back to `0.0.0.0`.
    public init(
        count: Int, bindIP: String, firstPort: UInt16, announcedIP: String? = nil, announceLinkLocal: Bool = false,
        interfaces: [InterfaceAddress]? = nil, certificate: DTLSCertificate,
        configuration: RoomMediaEngine.Configuration = .init()
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
        for i in 0..<max(1, count) {
            let port = firstPort == 0 ? 0 : firstPort + UInt16(i)
            let engine = RoomMediaEngine(
                certificate: certificate, workerIndex: i, configuration: configuration,
                wallClock: { MediaPlane.wallClock() })
            let handler = failureHandler
            engine.onTransportEvent = { participant, role, event in
                switch event {
                case .failed, .closed:
                    let report = handler.handler.withLock { $0 }
                    let failed = if case .failed = event { true } else { false }
                    report?(participant, role, failed)
                default: break
                }
            }
            let events = eventHandler
            engine.onMediaEvent = { event in events.handler.withLock { $0 }?(event) }
            do {
                workers.append(try Self.bind(bindIP, port: port, engine: engine))
            } catch let error where i == 0 && bindIP == "::" && error.errno == EAFNOSUPPORT {
                bindIP = "0.0.0.0"
                do { workers.append(try Self.bind(bindIP, port: port, engine: engine)) } catch { throw .bind(error) }
            } catch {
                throw .bind(error)
            }
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
        let candidates = workers.map { addresses.candidates(port: $0.localAddress.port) }
        endpoint = MediaEndpoint(fingerprint: certificate.fingerprint(.sha256), workers: candidates)
        threads = workers.map { worker in WorkerThread { worker.run() } }
    }

    private static func bind(
        _ ip: String, port: UInt16, engine: RoomMediaEngine
    ) throws(SocketError)
        -> UDPWorker<RoomMediaEngine>
    {
        guard let address = SocketAddress(ip: ip, port: port) else {
            throw SocketError(operation: "address \(ip)", errno: EINVAL)
        }
        return try UDPWorker(bindingTo: address, engine: engine)
    }

    public var localAddresses: [SocketAddress] { workers.map(\.localAddress) }

    /// Called on a worker thread when a participant's transport fails (ICE,
    /// consent, DTLS) or the peer closes it; the rooms layer removes WHIP
    /// and WHEP participants then (`RoomService.transportFailed`). Set once
    /// the signalling side exists.
    public func onTransportFailed(_ handler: @escaping @Sendable (ParticipantID, TransportRole) -> Void) {
        failureHandler.handler.withLock { $0 = { participant, role, _ in handler(participant, role) } }
    }

    /// `onTransportFailed` that also says whether the transport failed
    /// (true) or the peer closed it with a DTLS close_notify (false: a
    /// client leaving, not worth a warning).
    public func onTransportEnded(_ handler: @escaping @Sendable (ParticipantID, TransportRole, _ failed: Bool) -> Void) {
        failureHandler.handler.withLock { $0 = handler }
    }

    /// Called on a worker thread with what the rooms layer must tell
    /// participants (active speakers, dynacast layers, stream state;
    /// `RoomService.mediaEvent`). Set once the signalling side exists.
    public func onMediaEvent(_ handler: @escaping @Sendable (MediaEvent) -> Void) {
        eventHandler.handler.withLock { $0 = handler }
    }

    /// Any thread: runs `command` on the worker that owns its room.
    public func post(_ command: MediaCommand) {
        let index: Int? = roomWorkers.withLock { map in
            if case .openTransport(let room, let worker, _, _, _, _) = command { map[room] = worker % workers.count }
            return map[command.room]
        }
        guard let index else { return }
        workers[index].mailbox.post { engine, now, transmit in engine.execute(command, now: now, transmit: transmit) }
    }

    /// One worker's state for metrics: its counters and what it holds now.
    public struct WorkerSnapshot: Equatable, Sendable {
        public var counters: RoomMediaCounters
        public var transports: Int
        public var tracks: Int
        public var subscriptions: Int
        public init(counters: RoomMediaCounters, transports: Int, tracks: Int, subscriptions: Int) {
            self.counters = counters
            self.transports = transports
            self.tracks = tracks
            self.subscriptions = subscriptions
        }
    }

    /// Every worker's counters (waits up to `timeout` for each).
    public func counters(timeout: Duration = .milliseconds(500)) -> [RoomMediaCounters] {
        snapshots(timeout: timeout).map(\.counters)
    }

    /// Every worker's snapshot, read on the worker thread through its
    /// mailbox (waits up to `timeout` for each; a worker that does not
    /// answer in time is left out).
    public func snapshots(timeout: Duration = .milliseconds(500)) -> [WorkerSnapshot] {
        workers.compactMap { worker in
            let answer = Mutex<WorkerSnapshot?>(nil)
            worker.mailbox.post { engine, _, _ in
                let s = WorkerSnapshot(
                    counters: engine.counters, transports: engine.transports.transportCount,
                    tracks: engine.trackCount, subscriptions: engine.subscriptionCount)
                answer.withLock { $0 = s }
            }
            let end = MonotonicClock.now() + timeout
            while MonotonicClock.now() < end {
                if let s = answer.withLock({ $0 }) { return s }
                usleep(1000)
            }
            return nil
        }
    }

    /// The drain's end: each worker closes every transport it holds (DTLS
    /// close_notify) and hands those datagrams to the kernel before it
    /// answers, so they leave even if the process exits right after.
    /// Waits up to `timeout` for each worker; returns the transports closed.
    @discardableResult
    public func closeAllTransports(timeout: Duration = .milliseconds(500)) -> Int {
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

    public func stop() {
        for worker in workers { worker.requestStop() }
        for thread in threads { thread.join() }
    }

    /// NTP time for Sender Reports, from the system's wall clock.
    static func wallClock() -> NTPTimestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return NTPTimestamp(sinceUnixEpoch: .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec)))
    }
}

/// Why the media plane could not start.
public enum MediaPlaneError: Error, CustomStringConvertible {
    /// A media port could not be bound.
    case bind(SocketError)
    /// Nothing a client could reach would be announced.
    case addresses(MediaAddresses.Failure)

    public var description: String {
        switch self {
        case .bind(let e): "cannot bind the media ports: \(e)"
        case .addresses(let f): "no media address to announce: \(f)"
        }
    }
}

/// Shared by the plane and its engines' event callbacks.
private final class TransportFailureHandler: Sendable {
    let handler = Mutex<(@Sendable (ParticipantID, TransportRole, Bool) -> Void)?>(nil)
}

/// Shared by the plane and its engines' media-event callbacks.
private final class MediaEventHandler: Sendable {
    let handler = Mutex<(@Sendable (MediaEvent) -> Void)?>(nil)
}

extension MediaCommand {
    /// The room a command is about.
    var room: String {
        switch self {
        case .openTransport(let room, _, _, _, _, _), .setRemote(let room, _, _, _), .addIncomingTrack(let room, _, _, _),
            .removeIncomingTrack(let room, _, _), .forward(let room, _, _, _), .stopForward(let room, _, _),
            .setPreference(let room, _, _, _), .releaseParticipant(let room, _):
            room
        }
    }
}
