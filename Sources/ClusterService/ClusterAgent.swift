import Cluster
import NetIO
import Synchronization
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Where a node stands with the cluster, for `/metrics`, logs and the
/// signalling side (a join gets a 503 with the reason while disconnected).
package enum ClusterStatus: Equatable, Sendable {
    case starting
    /// Registered at the last refresh; the live nodes read then.
    case connected(nodes: [NodeRecord])
    /// The last refresh failed: live rooms go on untouched, new joins that
    /// need Redis fail fast with this reason.
    case disconnected(reason: String)
}

/// A node's membership in the cluster: on its own thread, rewrites the
/// node's record every `refreshInterval` (with the load `load()` reports
/// then) and reads the live nodes. While Redis is away it retries every
/// `retryInterval` (200 ms), so the node is registered again within that of
/// Redis returning, well inside the 2 s the issue asks. `placeRoom` runs on
/// the caller's thread over a second connection, bounded by the command
/// timeout: a join never hangs on Redis.
///
/// The agent also keeps the room homes this node holds true
/// (`ClusterAgent+Rooms.swift`): it remembers the rooms `placeRoom` homed
/// here, and at each refresh releases those that ended, claims again those
/// Redis lost and reports those homed elsewhere now (`ClusterRoomHooks`).
package final class ClusterAgent: @unchecked Sendable {
    // @unchecked: `thread` is touched only by `start` and `stop` (the
    // owner's thread), the registry of refreshes only by the agent's
    // thread, the placing registry only under `placing`, the rest through
    // mutexes and atomics.
    package let record: NodeRecord
    private let endpoint: RedisEndpoint
    private let keys: ClusterKeys
    let timing: ClusterTiming
    private let load: @Sendable () -> NodeLoad
    private let draining = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    /// Wakes the agent's thread at once on `stop`; between refreshes it
    /// sleeps on it.
    private let stopSignal = StopSignal()
    private let state = Mutex<ClusterStatus>(.starting)
    private let placing = Mutex<ClusterRegistry?>(nil)
    private var thread: WorkerThread?
    package static let retryInterval: Duration = .milliseconds(200)
    /// Refreshes that succeeded, for tests and metrics.
    private let refreshes = Atomic<Int>(0)
    /// The room homes this node claimed (`placeRoom` on signalling threads,
    /// the resync on the agent's thread).
    let claims: Mutex<RoomClaims>
    let roomHooks = Mutex<ClusterRoomHooks?>(nil)
    let cascadeHooks = Mutex<ClusterCascadeHooks?>(nil)
    /// The parts of rooms this node last wrote (`ClusterAgent+Cascade`):
    /// touched only on the agent's thread.
    var writtenParts: [String: (bytes: [UInt8], at: Instant)] = [:]
    /// When each local room's parts were last read (agent thread only).
    var partsReadAt: [String: Instant] = [:]
    /// Rooms a room event named since the last step; `all` after a
    /// (re)subscription, when events may have been lost.
    let wokenRooms = Mutex<(all: Bool, rooms: Set<String>)>((false, []))
    /// The most rooms remembered between two steps: anyone who can publish
    /// on the channel could name a new room per message, so past this the
    /// step reads every local room's parts instead (what it does after a
    /// resubscription), and the set stays this small.
    static let maxWokenRooms = 1_000

    /// Notes one wake-up: `room` (nil: every room) is read at the next
    /// step.
    static func noteWakeUp(_ woken: inout (all: Bool, rooms: Set<String>), room: String?) {
        guard !woken.all else { return }
        guard let room, woken.rooms.count < maxWokenRooms || woken.rooms.contains(room) else {
            woken = (true, [])
            return
        }
        woken.rooms.insert(room)
    }
    /// The wake-up subscription (with the cascade's hooks only).
    let roomEvents = Mutex<RoomEventSubscriber?>(nil)
    /// Participants this node placed lately, by room and node
    /// (`placeParticipant`).
    let recentPlacements = Mutex<[(room: String, node: NodeID, at: Instant)]>([])
    /// Parts of rooms too large for their record (`RoomShardRecord.Bounds`):
    /// not written.
    let oversizedParts = Atomic<Int>(0)
    /// `writtenParts.count`, readable from other threads.
    let writtenPartCount = Atomic<Int>(0)
    /// Metrics (`ClusterAgent+Rooms.swift`).
    let releases = Atomic<Int>(0)
    let staleDrops = Atomic<Int>(0)
    let redisErrors = Atomic<Int>(0)
    /// Nanoseconds the last successful register and live-nodes read took;
    /// negative before the first.
    private let roundTripNanoseconds = Atomic<Int64>(-1)

    package init(
        endpoint: RedisEndpoint, record: NodeRecord, keys: ClusterKeys = ClusterKeys(),
        timing: ClusterTiming = ClusterTiming(), load: @escaping @Sendable () -> NodeLoad
    ) {
        self.endpoint = endpoint
        self.record = record
        self.keys = keys
        self.timing = timing
        self.load = load
        claims = Mutex(RoomClaims(owner: record.id))
    }

    package var status: ClusterStatus { state.withLock { $0 } }
    package var refreshCount: Int { refreshes.load(ordering: .relaxed) }
    /// How long the last successful refresh's register and live-nodes read
    /// took (a reconnect included): nil before the first.
    package var lastRefreshRoundTrip: Duration? {
        let n = roundTripNanoseconds.load(ordering: .relaxed)
        return n < 0 ? nil : .nanoseconds(n)
    }
    /// Calls to Redis that failed or that Redis refused: refreshes,
    /// resyncs and placements.
    package var redisErrorCount: Int { redisErrors.load(ordering: .relaxed) }

    /// Draining: the record says so at the next refresh, and placement
    /// gives this node no new room.
    package func setDraining(_ on: Bool) { draining.store(on, ordering: .relaxed) }

    package func start() {
        guard thread == nil else { return }
        if cascadeHooks.withLock({ $0 }) != nil {
            let events = RoomEventSubscriber(endpoint: endpoint, keys: keys, timing: timing) { [self] room in
                wokenRooms.withLock { Self.noteWakeUp(&$0, room: room) }
                stopSignal.signal()
            }
            roomEvents.withLock { $0 = events }
            events.start()
        }
        thread = WorkerThread(name: "swiftlet-cluster") { [self] in run() }
    }

    /// Stops refreshing and removes the record at once (best effort: with
    /// Redis away, it expires by itself).
    package func stop() {
        stopRequested.store(true, ordering: .relaxed)
        stopSignal.signal()
        thread?.join()
        thread = nil
        roomEvents.withLock { $0 }?.stop()
        roomEvents.withLock { $0 = nil }
    }

    /// The room's home, placing it when it has none (or its home died).
    /// A home on this node is remembered as this node's claim: released
    /// once the room ends, kept true in Redis while it lives.
    package func placeRoom(_ room: String) throws(ClusterError) -> RoomHome {
        let home = try onPlacingConnection { registry throws(ClusterError) in
            try registry.placeRoom(room, preferringRegion: record.region)
        }
        if home.node == record.id { claims.withLock { $0.remember(room, epoch: home.epoch) } }
        return home
    }

    /// The room's home as Redis holds it now, without placing it (the
    /// server API reads where a room lives).
    package func storedHome(_ room: String) throws(ClusterError) -> StoredRoomHome {
        try onPlacingConnection { registry throws(ClusterError) in try registry.storedHomes([room]).first ?? .missing }
    }

    /// A live node's record: from the last refresh's read, else from
    /// Redis (a node that registered since, or whose room this node has
    /// just been told to join). Nil when its record has expired.
    package func liveRecord(of id: NodeID) throws(ClusterError) -> NodeRecord? {
        if case .connected(let nodes) = status, let known = nodes.first(where: { $0.id == id }) { return known }
        return try onPlacingConnection { registry throws(ClusterError) in try registry.record(of: id) }
    }

    /// Runs `body` on the placement connection (callers' threads, one at a
    /// time). A kept connection may have broken while idle (Redis
    /// restarted): on a connection error it is dropped and `body` tried
    /// once more on a new one; a new connection's error stands. Redis
    /// faults are counted.
    func onPlacingConnection<T: Sendable>(
        _ body: (ClusterRegistry) throws(ClusterError) -> T
    ) throws(ClusterError) -> T {
        do {
            return try placing.withLock { kept throws(ClusterError) -> T in
                for reused in [kept != nil, false] {
                    let registry: ClusterRegistry
                    if let k = kept { registry = k } else { registry = try makeRegistry() }
                    kept = registry
                    do throws(ClusterError) {
                        return try body(registry)
                    } catch {
                        guard case .redis = error else { throw error }
                        kept = nil
                        if !reused { throw error }
                    }
                }
                throw .noNodeAvailable
            }
        } catch {
            if error.isRedisFault { redisErrors.add(1, ordering: .relaxed) }
            throw error
        }
    }

    private func makeRegistry() throws(ClusterError) -> ClusterRegistry {
        let connection: RedisConnection
        do { connection = try RedisConnection(endpoint: endpoint, timeout: timing.commandTimeout) } catch {
            throw .redis(error)
        }
        return ClusterRegistry(connection: connection, keys: keys, timing: timing, wallClockMilliseconds: Self.now)
    }

    /// Refreshes every `refreshInterval` (every `retryInterval` after a
    /// failure), sleeping on `stopSignal` in between: an idle agent wakes
    /// once per refresh, and at once on `stop`.
    private func run() {
        var registry: ClusterRegistry?
        var next = MonotonicClock.now()
        var nextParts = next
        while !stopRequested.load(ordering: .relaxed) {
            let now = MonotonicClock.now()
            let woken = wokenRooms.withLock { $0.all || !$0.rooms.isEmpty }
            if now >= nextParts || woken, now < next {
                // While disconnected the refresh retries; parts wait for it.
                if let connected = registry, case .connected(let nodes) = status { syncParts(connected, nodes: nodes, now: now) }
                nextParts = now + timing.cascadeInterval
            }
            if now >= next {
                do throws(ClusterError) {
                    let connected: ClusterRegistry
                    if let r = registry { connected = r } else { connected = try makeRegistry() }
                    registry = connected
                    var current = record
                    current.load = load()
                    current.draining = draining.load(ordering: .relaxed)
                    try connected.register(current)
                    let nodes = try connected.liveNodes()
                    roundTripNanoseconds.store((MonotonicClock.now() - now).nanoseconds, ordering: .relaxed)
                    state.withLock { $0 = .connected(nodes: nodes) }
                    refreshes.add(1, ordering: .relaxed)
                    next = now + timing.refreshInterval
                    roomHooks.withLock { $0 }?.nodesRead(nodes)
                    resyncRooms(connected)
                    syncParts(connected, nodes: nodes, now: MonotonicClock.now())
                    nextParts = MonotonicClock.now() + timing.cascadeInterval
                } catch {
                    if error.isRedisFault { redisErrors.add(1, ordering: .relaxed) }
                    state.withLock { $0 = .disconnected(reason: error.description) }
                    next = now + Self.retryInterval
                }
            }
            // Without the cascade's hooks (a node without rooms, tests) the
            // thread sleeps from refresh to refresh.
            stopSignal.wait(until: cascadeHooks.withLock({ $0 }) == nil ? next : min(next, nextParts))
            // A room event's signal is taken back here; a stop's is seen
            // by the loop's condition first.
            if !stopRequested.load(ordering: .relaxed) { stopSignal.drain() }
        }
        try? registry?.deregister(record.id)
    }

    /// Milliseconds since the Unix epoch.
    static func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
    }
}

extension ClusterError {
    /// Redis failed or refused the call (not a placement that found no node).
    var isRedisFault: Bool {
        switch self {
        case .redis, .refused, .claim(.unexpectedReply): true
        case .claim(.candidateNotLive), .noNodeAvailable, .roomFull: false
        }
    }
}
