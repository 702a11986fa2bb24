import DTLS
import Forwarding
import Negotiation
import PeerSession
import RTCP
import RTP
import RTPStreams
import RoomProtocol
import Rooms
import Wire
import WorkerRelay

/// How a worker's room router runs (the server's options fill it). Public:
/// `MediaPlane`'s public initializer takes it (as
/// `RoomMediaEngine.Configuration`).
package struct RoomRouterConfiguration: Sendable {
    /// For every transport the router opens.
    package var transport = PeerTransport.Configuration()
    /// The RTCP report interval before the [0.5, 1.5] spread.
    package var reportInterval: Duration = RTCPReportInterval.video
    /// At most one keyframe request upstream per track per interval.
    package var keyframeRequestInterval: Duration = KeyframeRequestThrottle.defaultInterval
    /// Our SSRC as the sender of RRs and feedback (RFC 3550 section
    /// 6.4.2: the reporter's own SSRC).
    package var reporterSSRC = SSRC(0x5357_4C54)
    /// SDES CNAME (RFC 3550 section 6.5.1) of our RTCP compounds.
    package var cname = "swiftlet"
    /// Seed for the report interval spread.
    package var reportSeed: UInt64 = 0x5EED
    package init() {}
}

/// The media of the rooms one worker holds, sans-IO: executes the rooms
/// layer's `MediaCommand`s and the plane's relay `WorkerCommand`s (open
/// transports, register tracks from their sources, forward them to their
/// sinks) and forwards media between the worker's transports and relays.
///
/// A track's source is a publisher transport here or a relay from the
/// worker that receives it (`receiveRelayedMedia`); its sinks are
/// subscriber transports here and relays to other workers
/// (`addRelaySink`). Packets and `now` come in; datagrams go into the
/// `DatagramOutput` each call is given, relay messages into the links of
/// `connectRelays`, reports to `onMediaEvent`. It opens no socket and reads
/// no clock (`wallClock` is the shell's, read once per report round);
/// MediaWorker's `RoomMediaEngine` is the shell that drives it.
///
/// It owns a `TransportEngine` (ICE, DTLS, SRTP per transport, routing of
/// the shared port) and installs its `onMedia` and `onEvent`.
///
/// RTCP reports use one router-wide `ReportScheduler`: each round sends
/// every publisher transport one RR (a block per incoming track) and every
/// subscriber transport one SR per forwarded stream. One schedule keeps
/// the timer a single deadline; the [0.5, 1.5] spread still keeps the
/// rounds of different workers apart.
package final class RoomRouter {
    package typealias Configuration = RoomRouterConfiguration

    package let transports: TransportEngine
    /// This worker's index in `MediaEndpoint.workers`; `openTransport`
    /// for another index is ignored (and counted).
    package let workerIndex: Int
    package let configuration: Configuration
    let certificate: DTLSCertificate
    let wallClock: () -> NTPTimestamp

    /// Transport events with the participant and role they belong to.
    /// After `.failed` or `.closed` the transport is gone (its tracks and
    /// subscriptions stay until `releaseParticipant`).
    package var onTransportEvent: ((ParticipantID, TransportRole, PeerTransportEvent) -> Void)?

    /// Reports for the rooms layer (speakers, dynacast, stream state), on
    /// the worker thread.
    package var onMediaEvent: ((MediaEvent) -> Void)?

    package internal(set) var counters = RoomMediaCounters()

    /// Participants whose publisher transport runs data channels, with
    /// their room (the transport itself knows no room): where their
    /// messages are reported.
    var dataChannelRooms: [ParticipantID: String] = [:]
    var transportIDs: [TransportKey: TransportID] = [:]
    var transportKeys: [TransportID: TransportKey] = [:]
    var nextTransportNumber: UInt64 = 1
    /// Relay transports to other nodes, by peer node id, and the channel
    /// of each relay transport: what a relay packet is looked up by (an
    /// integer key per packet, no string hashed).
    var nodeRelays: [String: NodeRelayEntry] = [:]
    var nodeRelayChannels: [TransportID: NodeRelayChannel] = [:]
    var tracks: [TrackKey: IncomingTrack] = [:]
    var publisherRoutes: [ParticipantID: PublisherRoutes] = [:]
    /// The same routes, by the publisher transport the packets arrive on.
    var routesByTransport: [TransportID: PublisherRoutes] = [:]
    var subscriptions: [SubscriptionKey: Subscription] = [:]
    /// Subscriptions by the transport and outgoing SSRC a subscriber's
    /// RTCP names (`attach`).
    var outgoing: [OutgoingKey: Subscription] = [:]
    /// Per subscriber transport.
    var links: [TransportID: SubscriberLink] = [:]
    /// The same, with the transport, for subscriptions to hold.
    var sinks: [TransportID: SubscriberSink] = [:]
    /// Allocation rounds' storage, kept so that a round in steady state
    /// allocates nothing (`RoomRouter+Allocation.swift`, issue #14).
    var allocationScratch = AllocationScratch()
    /// The report rounds' builder, kept so its storage is reused.
    var reportBuilder: ReportCompoundBuilder
    /// Feedback to publishers (PLI, FIR, NACK) is written here, a kept
    /// buffer, then protected into the transmit slot: no array per request.
    var feedbackWriter = ByteWriter(capacity: 256)
    /// Where report compounds are written (`reportBuilder.maximumCompoundSize`).
    let reportBuffer: UnsafeMutableRawBufferPointer
    /// The ids our subscriber offers give the extensions we write.
    let egressExtensionIDs = HeaderExtensionIDs(maps: SubscriberOfferBuilder.defaultHeaderExtensions)
    var reportScheduler: ReportScheduler<ReportJitter>?
    var nextHousekeeping: Instant?
    /// The earliest NACK generator deadline of any layer (nil: none).
    var nextNACKRound: Instant?
    /// The numbers of one NACK, kept between rounds (no allocation per NACK).
    var nackNumbers: [UInt16] = []
    var nextSpeakerRound = Instant.zero
    var speakerSelectors: [String: RoomSpeakers] = [:]
    /// Rooms whose speaker state a round found empty: kept storage.
    var speakerRoomsToDrop: [String] = []
    /// Rooms whose active speakers another worker reports
    /// (`setSpeakerReporter(room, false)`).
    var silentSpeakerRooms: Set<String> = []

    /// The relay links of `connectRelays`, by far worker index.
    var relaySourceLinks: [(any RelaySourceLink)?] = []
    var relayFeedbackLinks: [(any RelayFeedbackLink)?] = []
    /// Far side: relayed tracks by (source worker, relay).
    var relayedTracks: [RelayKey: IncomingTrack] = [:]
    /// Source side: tracks relayed out, by (far worker, relay): what the
    /// far worker's feedback names.
    var relaySinkTracks: [RelayKey: IncomingTrack] = [:]
    /// This worker's ring to the recorder thread, when recording is on.
    var recorderLink: (any RelaySourceLink)?

    /// `wallClock` gives the NTP time of SRs (the server passes the real
    /// clock, tests a fixed one); it is read once per report round.
    package init(
        certificate: DTLSCertificate, workerIndex: Int, configuration: Configuration = Configuration(),
        wallClock: @escaping () -> NTPTimestamp
    ) {
        self.certificate = certificate
        self.workerIndex = workerIndex
        self.configuration = configuration
        self.wallClock = wallClock
        reportBuilder = ReportCompoundBuilder(reporterSSRC: configuration.reporterSSRC, cname: configuration.cname)
        reportBuffer = .allocate(byteCount: reportBuilder.maximumCompoundSize, alignment: 4)
        nackNumbers.reserveCapacity(64)
        transports = TransportEngine()
        transports.onMedia = { [unowned self] id, kind, buffer, now, output in
            switch kind {
            case .rtp(let length): handleRTP(from: id, length: length, in: buffer, now: now, output: output)
            case .rtcp(let length): handleRTCP(from: id, length: length, in: buffer, now: now, output: output)
            case .handled: break
            }
        }
        transports.onEvent = { [unowned self] id, event in handleEvent(id, event) }
    }

    /// The transport of `participant` in `role`, if open.
    package func transportID(of participant: ParticipantID, role: TransportRole) -> TransportID? {
        transportIDs[TransportKey(participant: participant, role: role)]
    }

    package var trackCount: Int { tracks.count }
    package var subscriptionCount: Int { subscriptions.count }

    // MARK: Input

    /// One datagram of the worker's port (the shell's receive slot: it may
    /// be decrypted or rewritten in place).
    package func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?, now: Instant,
        output: any DatagramOutput
    ) {
        transports.receive(datagram, from: source, to: local, now: now, output: output)
        counters.dropped.srtpSSRCLimit = transports.ssrcLimitDrops
    }

    deinit { reportBuffer.deallocate() }

    package func hasValidated(_ address: TransportAddress) -> Bool { transports.hasValidated(address) }

    /// After commands: sends what the transports queued and reports their
    /// events.
    package func flushAll(output: any DatagramOutput) { transports.flushAll(output: output) }

    /// Called once `now` has reached `nextDeadline()`.
    package func timeout(now: Instant, output: any DatagramOutput) {
        transports.timeout(now: now, output: output)
        if case .sendReport = reportScheduler?.poll(now: now) { sendReports(now: now, output: output) }
        if let next = nextHousekeeping, now >= next { housekeeping(now: now, output: output) }
        if let next = nextNACKRound, now >= next { sendPublisherNACKs(now: now, output: output) }
    }

    package func nextDeadline() -> Instant? {
        // Called every loop turn: no arrays.
        func earlier(_ a: Instant?, _ b: Instant?) -> Instant? {
            guard let a else { return b }
            guard let b else { return a }
            return min(a, b)
        }
        return earlier(
            earlier(earlier(transports.nextDeadline(), reportScheduler?.nextDeadline), nextHousekeeping), nextNACKRound)
    }

    // MARK: Transport events

    func handleEvent(_ id: TransportID, _ event: PeerTransportEvent) {
        if handleNodeRelayEvent(id, event) { return }
        guard let key = transportKeys[id] else { return }
        if case .dataChannel(let dataEvent) = event {
            handleDataChannelEvent(dataEvent, of: key, transport: id)
            return
        }
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
        sinks[id] = nil
        for s in subscriptions.values where s.transportID == id { attach(s, to: nil) }
    }

    /// Points `s` at `sink` (nil: its transport is gone) and keeps the
    /// RTCP lookup (`outgoing`) in step.
    func attach(_ s: Subscription, to sink: SubscriberSink?) {
        if let old = s.transportID, outgoing[OutgoingKey(transport: old, ssrc: s.outgoingSSRC)] === s {
            outgoing[OutgoingKey(transport: old, ssrc: s.outgoingSSRC)] = nil
        }
        s.sink = sink
        if let id = sink?.id { outgoing[OutgoingKey(transport: id, ssrc: s.outgoingSSRC)] = s }
    }
}
