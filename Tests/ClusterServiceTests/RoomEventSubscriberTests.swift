import Cluster
import Foundation
import NetIO
import RedisTesting
import Synchronization
import Testing
import Wire

@testable import ClusterService

extension ClusterProcessSuite {
    /// The cascade's wake-up on a real redis-server: a node's change of its
    /// part (`RoomShardWrite.wakeUp`) reaches every subscriber at once, and
    /// after Redis comes back the subscriber subscribes again and asks for
    /// every room to be read (what was published meanwhile is lost).
    @Suite(.timeLimit(.minutes(1))) struct RoomEventSubscriberTests {
        static let keys = ClusterKeys(prefix: "ev")

        final class Seen: Sendable {
            let events = Mutex<[String?]>([])
            func wait(for count: Int, within seconds: Double = 5) -> [String?] {
                let deadline = Date().addingTimeInterval(seconds)
                while events.withLock({ $0.count }) < count, Date() < deadline { usleep(10_000) }
                return events.withLock { $0 }
            }
        }

        @Test func aWakeUpNamesItsRoomAndAResubscriptionAsksForEveryRoom() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let seen = Seen()
            let subscriber = RoomEventSubscriber(
                endpoint: .unix(path: server.socketPath), keys: Self.keys,
                timing: ClusterTiming(commandTimeout: .seconds(1))
            ) { room in seen.events.withLock { $0.append(room) } }
            subscriber.start()
            defer { subscriber.stop() }
            #expect(seen.wait(for: 1) == [nil])

            let publisher = try RedisConnection(endpoint: .unix(path: server.socketPath), timeout: .seconds(1))
            // Another channel's message, then two rooms' wake-ups.
            _ = try publisher.call(["PUBLISH", "ev:elsewhere", "x"])
            for room in ["big", "small"] {
                #expect(try publisher.call(RoomShardWrite.wakeUp(room: room, keys: Self.keys)) == .integer(1))
            }
            #expect(seen.wait(for: 3) == [nil, "big", "small"])
            let events = subscriber.events.load(ordering: .relaxed)
            let subscribed = subscriber.isSubscribed.load(ordering: .relaxed)
            #expect(events == 2 && subscribed)

            // Redis away: not subscribed; back: subscribed again, and every
            // room is to be read.
            server.stop(keepingFolder: true)
            let deadline = Date().addingTimeInterval(5)
            while subscriber.isSubscribed.load(ordering: .relaxed), Date() < deadline { usleep(10_000) }
            let away = !subscriber.isSubscribed.load(ordering: .relaxed)
            #expect(away)
            try server.start()
            #expect(seen.wait(for: 4) == [nil, "big", "small", nil])
            let subscriptions = subscriber.subscriptions.load(ordering: .relaxed)
            #expect(subscriptions == 2)
        }

        /// A quiet subscription is not an error: `nextPush` answers nil at
        /// its deadline and the connection stays.
        @Test func aQuietSubscriptionWaitsUntilItsDeadline() throws {
            let server = try RedisServerProcess()
            defer { server.stop() }
            let connection = try RedisConnection(endpoint: .unix(path: server.socketPath), timeout: .seconds(1))
            _ = try connection.call(RoomEvents.subscribe(keys: Self.keys))
            let start = Date()
            #expect(try connection.nextPush(until: MonotonicClock.now() + Duration.milliseconds(150)) == nil)
            #expect(Date().timeIntervalSince(start) >= 0.14)
            #expect(connection.isConnected)
        }
    }
}
