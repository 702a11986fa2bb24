import Cluster
import NetIO
import Synchronization
import Wire

/// The cascade's wake-up (docs/CLUSTER.md, "The exchange"): a connection
/// subscribed to `<prefix>:room-events`, on its own thread, that reports
/// each room named there (a node changed its part of that room). Pub/sub
/// is a wake-up only: a message published while this node was not
/// subscribed is lost, so after every (re)subscription it reports `nil`,
/// "read every room", and the truth is always read from the keys.
final class RoomEventSubscriber: @unchecked Sendable {
    // @unchecked: `thread` is touched only by `start` and `stop` (the
    // owner's thread); the rest is the subscriber thread's or atomic.
    private let endpoint: RedisEndpoint
    private let keys: ClusterKeys
    private let timing: ClusterTiming
    private let onEvent: @Sendable (_ room: String?) -> Void
    private let stopRequested = Atomic<Bool>(false)
    private let stopSignal = StopSignal()
    private var thread: WorkerThread?
    /// Subscriptions made (the first, then one per reconnect).
    let subscriptions = Atomic<Int>(0)
    /// Room events received.
    let events = Atomic<Int>(0)

    /// Subscribed now: while not, the agent reads its rooms' parts at
    /// every step instead of waiting for wake-ups.
    let isSubscribed = Atomic<Bool>(false)

    /// How long one wait for a message lasts before the thread checks
    /// whether it should stop: the wait is on the socket, not on the stop
    /// pipe, so a stop takes at most this long.
    static let pollSlice: Duration = .milliseconds(200)

    init(
        endpoint: RedisEndpoint, keys: ClusterKeys, timing: ClusterTiming,
        onEvent: @escaping @Sendable (_ room: String?) -> Void
    ) {
        self.endpoint = endpoint
        self.keys = keys
        self.timing = timing
        self.onEvent = onEvent
    }

    func start() {
        guard thread == nil else { return }
        thread = WorkerThread(name: "swiftlet-events") { [self] in run() }
    }

    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        stopSignal.signal()
        thread?.join()
        thread = nil
    }

    private func run() {
        var connection: RedisConnection?
        while !stopRequested.load(ordering: .relaxed) {
            do throws(RedisConnectionError) {
                if connection == nil {
                    let c = try RedisConnection(endpoint: endpoint, timeout: timing.commandTimeout)
                    let reply = try c.call(RoomEvents.subscribe(keys: keys))
                    guard case .array = reply else { throw .closed("SUBSCRIBE answered \(reply)") }
                    connection = c
                    subscriptions.add(1, ordering: .relaxed)
                    isSubscribed.store(true, ordering: .relaxed)
                    // Whatever was published before this point is lost.
                    onEvent(nil)
                }
                guard let c = connection else { continue }
                guard let push = try c.nextPush(until: MonotonicClock.now() + Self.pollSlice) else { continue }
                if let room = RoomEvents.room(from: push, keys: keys) {
                    events.add(1, ordering: .relaxed)
                    onEvent(room)
                }
            } catch {
                isSubscribed.store(false, ordering: .relaxed)
                connection?.close()
                connection = nil
                stopSignal.wait(until: MonotonicClock.now() + ClusterAgent.retryInterval)
            }
        }
        isSubscribed.store(false, ordering: .relaxed)
        connection?.close()
    }
}
