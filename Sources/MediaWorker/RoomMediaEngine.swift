import DTLS
import MediaRouter
import NetIO
import PeerSession
import RTPStreams
import RoomProtocol
import Rooms
import Wire

/// The worker shell of a worker's room media: the NetIO `WorkerEngine`
/// whose input the worker's loop delivers (datagrams, mailbox closures,
/// timeouts) and which hands each to the sans-IO `RoomRouter`, with the
/// worker's `TransmitQueue` as the router's output. It adds what only the
/// shell has: the snapshots `/metrics` reads (`WorkerSnapshotCell`) and the
/// worker's ICE-TCP port counters in them.
///
/// Commands arrive as control closures through the worker's mailbox:
///
///     worker.mailbox.post { engine, now, transmit in engine.execute(command, now: now, transmit: transmit) }
package final class RoomMediaEngine: WorkerEngine {
    /// Runs on the worker thread with the engine and the current time.
    package typealias Control = @Sendable (RoomMediaEngine, Instant, TransmitQueue) -> Void
    package typealias Configuration = RoomRouterConfiguration

    /// The media core of this worker's rooms.
    package let router: RoomRouter
    /// Where `/metrics` reads this worker's state (`WorkerSnapshotCell`).
    package let snapshots = WorkerSnapshotCell()
    /// The worker's ICE-TCP port, read on the worker thread for snapshots
    /// (set by `MediaPlane` once the worker exists; weak: the worker owns
    /// both).
    weak var iceTCPPort: ICETCPPort?
    var snapshotDirty = false
    var nextSnapshot = Instant.zero

    /// `wallClock` gives the NTP time of SRs (the server passes the real
    /// clock, tests a fixed one); the router reads it once per report round.
    package init(
        certificate: DTLSCertificate, workerIndex: Int, configuration: Configuration = Configuration(),
        wallClock: @escaping () -> NTPTimestamp
    ) {
        router = RoomRouter(
            certificate: certificate, workerIndex: workerIndex, configuration: configuration, wallClock: wallClock)
    }

    package var workerIndex: Int { router.workerIndex }
    package var configuration: Configuration { router.configuration }
    package var transports: TransportEngine { router.transports }
    package var counters: RoomMediaCounters { router.counters }
    package var stateSizes: RoomMediaStateSizes { router.stateSizes }
    package var trackCount: Int { router.trackCount }
    package var subscriptionCount: Int { router.subscriptionCount }

    /// Transport events with the participant and role they belong to
    /// (`RoomRouter.onTransportEvent`).
    package var onTransportEvent: ((ParticipantID, TransportRole, PeerTransportEvent) -> Void)? {
        get { router.onTransportEvent }
        set { router.onTransportEvent = newValue }
    }

    /// Reports for the rooms layer, on the worker thread.
    package var onMediaEvent: ((MediaEvent) -> Void)? {
        get { router.onMediaEvent }
        set { router.onMediaEvent = newValue }
    }

    package func transportID(of participant: ParticipantID, role: TransportRole) -> TransportID? {
        router.transportID(of: participant, role: role)
    }

    /// One decision of the rooms layer (`RoomRouter.execute`).
    package func execute(_ command: MediaCommand, now: Instant, transmit: TransmitQueue) {
        router.execute(command, now: now, output: transmit)
    }

    /// The drain's end: every transport sends DTLS close_notify and is
    /// forgotten (`RoomRouter.closeAllTransports`).
    @discardableResult
    package func closeAllTransports(now: Instant, transmit: TransmitQueue) -> Int {
        router.closeAllTransports(now: now, output: transmit)
    }

    // MARK: WorkerEngine

    package func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?, now: Instant,
        transmit: TransmitQueue
    ) {
        router.receive(datagram, from: source, to: local, now: now, output: transmit)
        publishSnapshot(now: now)
    }

    package func hasValidated(_ address: TransportAddress) -> Bool { router.hasValidated(address) }

    package func control(_ message: Control, now: Instant, transmit: TransmitQueue) {
        message(self, now, transmit)
        router.flushAll(output: transmit)
        publishSnapshot(now: now, force: true)
    }

    package func timeout(now: Instant, transmit: TransmitQueue) {
        router.timeout(now: now, output: transmit)
        publishSnapshot(now: now)
    }

    package func nextDeadline() -> Instant? {
        guard let snapshot = snapshotDeadline else { return router.nextDeadline() }
        guard let d = router.nextDeadline() else { return snapshot }
        return min(d, snapshot)
    }
}
