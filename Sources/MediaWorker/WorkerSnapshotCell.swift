import MediaRouter
import NetIO
import Synchronization
import Wire

extension MediaPlane {
    /// One worker's state for metrics: its counters and what it holds now.
    package struct WorkerSnapshot: Equatable, Sendable {
        package var counters: RoomMediaCounters
        package var transports: Int
        package var tracks: Int
        package var subscriptions: Int
        /// The worker's ICE-TCP port (zero without one) and its open connections.
        package var iceTCP = ICETCPCounters()
        package var iceTCPConnections = 0
        /// Relay transports to other nodes this worker keeps, and how many
        /// are connected (the cluster's first worker only).
        package var nodeRelays = 0
        package var nodeRelaysConnected = 0
        /// Traffic per peer node's relay (empty outside a cluster: no
        /// allocation then).
        package var nodeRelayTraffic: [String: NodeRelayTraffic] = [:]
        package init(counters: RoomMediaCounters, transports: Int, tracks: Int, subscriptions: Int) {
            self.counters = counters
            self.transports = transports
            self.tracks = tracks
            self.subscriptions = subscriptions
        }
    }
}

/// Where a worker leaves its latest `WorkerSnapshot` for `/metrics`, so
/// that reading metrics never posts to the worker nor waits for its loop,
/// and the worker never waits for a reader: it publishes with a try-lock
/// and skips a publication a reader is holding up (the next one follows
/// within `RoomMediaEngine.snapshotInterval`). A reader waits at most for
/// one assignment of the value by the worker. Storing the value retains
/// the counters' buffers (copy-on-write): no allocation unless a
/// histogram changes between two publications.
package final class WorkerSnapshotCell: Sendable {
    private let latest = Mutex<MediaPlane.WorkerSnapshot?>(nil)

    package init() {}

    /// Worker thread; false when skipped (a reader held the cell).
    @discardableResult
    func publish(_ snapshot: MediaPlane.WorkerSnapshot) -> Bool {
        latest.withLockIfAvailable { $0 = snapshot } != nil
    }

    /// Any thread: the last published snapshot (nil before the first).
    package func read() -> MediaPlane.WorkerSnapshot? { latest.withLock { $0 } }
}

extension RoomMediaEngine {
    /// The most a published snapshot lags the worker's counters.
    static let snapshotInterval: Duration = .milliseconds(20)

    /// After every input: publishes the snapshot when it changed and is
    /// due (or `force`, after a control message: what it opened or
    /// closed shows at once). Per datagram, a flag and a comparison.
    func publishSnapshot(now: Instant, force: Bool = false) {
        snapshotDirty = true
        guard force || now >= nextSnapshot else { return }
        var snapshot = MediaPlane.WorkerSnapshot(
            counters: counters, transports: transports.transportCount, tracks: trackCount,
            subscriptions: subscriptionCount)
        if let port = iceTCPPort {
            snapshot.iceTCP = port.counters
            snapshot.iceTCPConnections = port.connectionCount
        }
        (snapshot.nodeRelays, snapshot.nodeRelaysConnected) = router.nodeRelayCounts
        if snapshot.nodeRelays > 0 { snapshot.nodeRelayTraffic = router.nodeRelayTraffic }
        if snapshots.publish(snapshot) {
            snapshotDirty = false
            nextSnapshot = now + Self.snapshotInterval
        } else {
            // A reader holds the cell for a copy: try again shortly, not
            // at once (the loop would spin on a past deadline).
            nextSnapshot = now + .milliseconds(1)
        }
    }

    /// The deadline of an unpublished change (nil: nothing pending).
    var snapshotDeadline: Instant? { snapshotDirty ? nextSnapshot : nil }
}
