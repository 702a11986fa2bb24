import DTLS
import Forwarding
import Negotiation
import NetIO
import PeerSession
import RTCP
import RTPStreams
import Rooms
import Wire

/// The media half of the SFU rooms a worker owns: executes the rooms
/// layer's `MediaCommand`s (open transports, register published tracks,
/// forward them to subscribers) and forwards media between the worker's
/// transports.
///
/// It owns a `TransportEngine` (ICE, DTLS, SRTP per transport, routing of
/// the shared port) and installs its `onMedia` and `onEvent`; everything
/// runs on the worker thread. Commands arrive as control closures through
/// the worker's mailbox:
///
///     worker.mailbox.post { engine, now, transmit in engine.execute(command, now: now, transmit: transmit) }
///
/// RTCP reports use one engine-wide `ReportScheduler`: each round sends
/// every publisher transport one RR (a block per incoming track) and every
/// subscriber transport one SR per forwarded stream. One schedule keeps
/// the timer a single deadline; the [0.5, 1.5] spread still keeps the
/// rounds of different workers apart.
public final class RoomMediaEngine: WorkerEngine {
    /// Runs on the worker thread with the engine and the current time.
    public typealias Control = @Sendable (RoomMediaEngine, Instant, TransmitQueue) -> Void

    public struct Configuration: Sendable {
        /// For every transport the engine opens.
        public var transport = PeerTransport.Configuration()
        /// The RTCP report interval before the [0.5, 1.5] spread.
        public var reportInterval: Duration = RTCPReportInterval.video
        /// At most one keyframe request upstream per track per interval.
        public var keyframeRequestInterval: Duration = KeyframeRequestThrottle.defaultInterval
        /// Our SSRC as the sender of RRs and feedback (RFC 3550 section
        /// 6.4.2: the reporter's own SSRC).
        public var reporterSSRC = SSRC(0x5357_4C54)
        /// SDES CNAME (RFC 3550 section 6.5.1) of our RTCP compounds.
        public var cname = "swiftlet"
        /// Seed for the report interval spread.
        public var reportSeed: UInt64 = 0x5EED
        public init() {}
    }

    public let transports: TransportEngine
    /// This worker's index in `MediaEndpoint.workers`; `openTransport`
    /// for another index is ignored (and counted).
    public let workerIndex: Int
    public let configuration: Configuration
    let certificate: DTLSCertificate
    let wallClock: () -> NTPTimestamp

    /// Transport events with the participant and role they belong to.
    /// After `.failed` or `.closed` the transport is gone (its tracks and
    /// subscriptions stay until `releaseParticipant`).
    public var onTransportEvent: ((ParticipantID, TransportRole, PeerTransportEvent) -> Void)?

    /// Reports for the rooms layer (speakers, dynacast, stream state), on
    /// the worker thread.
    public var onMediaEvent: ((MediaEvent) -> Void)?

    public internal(set) var counters = RoomMediaCounters()
    /// Where `/metrics` reads this worker's state (`WorkerSnapshotCell`).
    public let snapshots = WorkerSnapshotCell()
    /// The worker's ICE-TCP port, read on the worker thread for snapshots
    /// (set by `MediaPlane` once the worker exists; weak: the worker owns
    /// both).
    weak var iceTCPPort: ICETCPPort?
    var snapshotDirty = false
    var nextSnapshot = Instant.zero

    var transportIDs: [TransportKey: TransportID] = [:]
    var transportKeys: [TransportID: TransportKey] = [:]
    var nextTransportNumber: UInt64 = 1
    var tracks: [TrackKey: IncomingTrack] = [:]
    var publisherRoutes: [ParticipantID: PublisherRoutes] = [:]
    /// The same routes, by the publisher transport the packets arrive on.
    var routesByTransport: [TransportID: PublisherRoutes] = [:]
    var subscriptions: [SubscriptionKey: Subscription] = [:]
    var outgoing: [OutgoingKey: Subscription] = [:]
    /// Per subscriber transport.
    var links: [TransportID: SubscriberLink] = [:]
    /// The ids our subscriber offers give the extensions we write.
    let egressExtensionIDs = HeaderExtensionIDs(maps: SubscriberOfferBuilder.defaultHeaderExtensions)
    var reportScheduler: ReportScheduler<ReportJitter>?
    var nextHousekeeping: Instant?
    /// The earliest NACK generator deadline of any layer (nil: none).
    var nextNACKRound: Instant?
    var nextSpeakerRound = Instant.zero
    var speakerSelectors: [String: ActiveSpeakerSelector<ParticipantID>] = [:]

    /// `wallClock` gives the NTP time of SRs (the server passes the real
    /// clock, tests a fixed one); it is read once per report round.
    public init(
        certificate: DTLSCertificate, workerIndex: Int, configuration: Configuration = Configuration(),
        wallClock: @escaping () -> NTPTimestamp
    ) {
        self.certificate = certificate
        self.workerIndex = workerIndex
        self.configuration = configuration
        self.wallClock = wallClock
        transports = TransportEngine()
        transports.onMedia = { [unowned self] id, kind, buffer, now, transmit in
            switch kind {
            case .rtp(let length): handleRTP(from: id, length: length, in: buffer, now: now, transmit: transmit)
            case .rtcp(let length): handleRTCP(from: id, length: length, in: buffer, now: now, transmit: transmit)
            case .handled: break
            }
        }
        transports.onEvent = { [unowned self] id, event in handleEvent(id, event) }
    }

    /// The transport of `participant` in `role`, if open.
    public func transportID(of participant: ParticipantID, role: TransportRole) -> TransportID? {
        transportIDs[TransportKey(participant: participant, role: role)]
    }

    public var trackCount: Int { tracks.count }
    public var subscriptionCount: Int { subscriptions.count }

    // MARK: WorkerEngine

    public func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?, now: Instant,
        transmit: TransmitQueue
    ) {
        transports.receive(datagram, from: source, to: local, now: now, transmit: transmit)
        counters.dropped.srtpSSRCLimit = transports.ssrcLimitDrops
        publishSnapshot(now: now)
    }

    public func hasValidated(_ address: TransportAddress) -> Bool { transports.hasValidated(address) }

    public func control(_ message: Control, now: Instant, transmit: TransmitQueue) {
        message(self, now, transmit)
        transports.flushAll(transmit: transmit)
        publishSnapshot(now: now, force: true)
    }

    public func timeout(now: Instant, transmit: TransmitQueue) {
        transports.timeout(now: now, transmit: transmit)
        if case .sendReport = reportScheduler?.poll(now: now) { sendReports(now: now, transmit: transmit) }
        if let next = nextHousekeeping, now >= next { housekeeping(now: now, transmit: transmit) }
        if let next = nextNACKRound, now >= next { sendPublisherNACKs(now: now, transmit: transmit) }
        publishSnapshot(now: now)
    }

    public func nextDeadline() -> Instant? {
        // Called every loop turn: no arrays.
        func earlier(_ a: Instant?, _ b: Instant?) -> Instant? {
            guard let a else { return b }
            guard let b else { return a }
            return min(a, b)
        }
        return earlier(
            earlier(
                earlier(earlier(transports.nextDeadline(), reportScheduler?.nextDeadline), nextHousekeeping), nextNACKRound),
            snapshotDeadline)
    }

    // MARK: Transport events

    func handleEvent(_ id: TransportID, _ event: PeerTransportEvent) {
        guard let key = transportKeys[id] else { return }
        switch event {
        case .failed(let failure):
            counters.failures.count(failure)
            forget(id)
        case .closed: forget(id)
        default: break
        }
        onTransportEvent?(key.participant, key.role, event)
    }

    /// Drops the engine's references to a transport that is gone.
    func forget(_ id: TransportID) {
        guard let key = transportKeys.removeValue(forKey: id) else { return }
        if transportIDs[key] == id { transportIDs[key] = nil }
        routesByTransport[id] = nil
        links[id] = nil
        for s in subscriptions.values where s.transportID == id { s.transportID = nil }
    }
}
