import Foundation
import HTTPClient
import NetIO
import Rooms
import Signaling
import Synchronization
import Webhooks
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Delivers webhook events (docs/API.md, "Webhooks"): one thread per
/// configured URL, each with its bounded `WebhookQueue`. `notify` only
/// appends to the queues under their locks and wakes the threads, so the
/// signalling thread (which calls it under the rooms lock) never waits on
/// a receiver; a slow or dead receiver fills its own queue, whose new
/// events are then dropped and counted. Media never passes here.
package final class WebhookNotifier: Sendable {
    package struct Configuration: Sendable {
        /// `http://host[:port][/path]` each.
        package var urls: [String]
        /// The API key whose secret signs every request (`iss`).
        package var key: String
        package var secret: String
        package var policy = WebhookRetryPolicy()
        /// Events waiting per URL at most.
        package var capacity = 1000
        /// One attempt's limit: connect, send, and the whole response.
        package var attemptTimeout: Duration = .seconds(5)
        package init(urls: [String], key: String, secret: String) {
            self.urls = urls
            self.key = key
            self.secret = secret
        }
    }

    /// Why a webhook URL is refused at start, or nil.
    package static func problem(url: String) -> String? {
        PlainHTTPURL(url) == nil ? "expected http://HOST[:PORT][/PATH] (https is not supported yet)" : nil
    }

    private final class Receiver: Sendable {
        let target: PlainHTTPURL
        let queue: Mutex<WebhookQueue>
        let wakeup = Mailbox<Never>()
        init(target: PlainHTTPURL, queue: WebhookQueue) {
            self.target = target
            self.queue = Mutex(queue)
        }
    }

    private let configuration: Configuration
    private let receivers: [Receiver]
    private let threads = Mutex<[WorkerThread]>([])
    private let running = Atomic<Bool>(true)
    private let ids = Mutex(RandomIdentifiers())
    private let log: ServerLog

    /// Starts one delivery thread per URL; a URL `problem` refuses is
    /// skipped (the server checks them before).
    package init(_ configuration: Configuration, log: ServerLog = .off) {
        self.configuration = configuration
        self.log = log
        receivers = configuration.urls.compactMap { url in
            PlainHTTPURL(url).map {
                Receiver(target: $0, queue: WebhookQueue(capacity: configuration.capacity, policy: configuration.policy))
            }
        }
        let started = receivers.map { receiver in
            WorkerThread(name: "webhook") { [self] in deliver(receiver) }
        }
        threads.withLock { $0 = started }
    }

    /// Queues the rooms' events, in order, for every URL.
    package func notify(_ events: [RoomEvent]) {
        guard !events.isEmpty, !receivers.isEmpty else { return }
        let now = Date().timeIntervalSince1970
        let bodies = events.map { event in
            WebhookEvent(event, id: ids.withLock { $0.next(prefix: "EV_") }, createdAt: (now * 1000).rounded() / 1000).jsonBytes()
        }
        enqueue(bodies)
    }

    /// Queues one event made elsewhere (the recorder's
    /// `WebhookEvent.recordingFinished`).
    package func notify(_ event: WebhookEvent) { enqueue([event.jsonBytes()]) }

    /// A fresh event id and the time now, for callers building a
    /// `WebhookEvent` themselves.
    package func nextEventStamp() -> (id: String, createdAt: Double) {
        (ids.withLock { $0.next(prefix: "EV_") }, (Date().timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    private func enqueue(_ bodies: [[UInt8]]) {
        for receiver in receivers {
            receiver.queue.withLock { q in for body in bodies { q.enqueue(body) } }
            receiver.wakeup.wake()
        }
    }

    /// Sent, failed and dropped, summed over every URL.
    package var counts: WebhookQueue.Counts {
        receivers.reduce(into: WebhookQueue.Counts()) { sum, r in
            let c = r.queue.withLock { $0.counts }
            sum.sent += c.sent
            sum.failed += c.failed
            sum.dropped += c.dropped
        }
    }

    /// Waits until every queue is empty or `limit` passes, then stops:
    /// at exit, so that the drain's events go out without holding the
    /// exit on a dead receiver.
    package func finish(within limit: Duration) {
        let deadline = MonotonicClock.now() + limit
        while MonotonicClock.now() < deadline, receivers.contains(where: { r in r.queue.withLock { $0.count > 0 } }) {
            usleep(10_000)
        }
        stop()
    }

    /// Stops the threads (an attempt in progress ends within 200 ms).
    package func stop() {
        running.store(false, ordering: .releasing)
        for receiver in receivers { receiver.wakeup.wake() }
        for thread in threads.withLock({ $0 }) { thread.join() }
    }

    private func deliver(_ receiver: Receiver) {
        while running.load(ordering: .acquiring) {
            let now = MonotonicClock.now()
            switch receiver.queue.withLock({ $0.next(now: now) }) {
            case .send(let body):
                let outcome = post(body, to: receiver.target)
                if let failure = outcome {
                    log(.warning, "webhook delivery failed", [("url", receiver.target.text), ("reason", failure)])
                }
                receiver.queue.withLock { $0.finished(success: outcome == nil, now: MonotonicClock.now()) }
            case .wait(let until):
                let ms = max(1, min(1000, (until - now).nanoseconds / 1_000_000))
                if receiver.wakeup.wait(milliseconds: Int32(ms)) { _ = receiver.wakeup.drain() }
            case .idle:
                if receiver.wakeup.wait(milliseconds: 1000) { _ = receiver.wakeup.drain() }
            }
        }
    }

    /// One POST; nil when the receiver answered 2xx, else why not.
    private func post(_ body: [UInt8], to target: PlainHTTPURL) -> String? {
        guard let endpoint = target.endpoint() else { return "cannot resolve \(target.host)" }
        let authorization = WebhookSignature.authorization(
            body: body, key: configuration.key, secret: configuration.secret, nowSeconds: Int64(Date().timeIntervalSince1970))
        let exchange: HTTPExchange
        do {
            exchange = try HTTPExchange(
                to: endpoint, method: "POST", path: target.path,
                headers: [("Content-Type", "application/webhook+json"), ("Authorization", authorization)], body: body)
        } catch {
            return "connect: \(error)"
        }
        defer { exchange.stream.shutdown() }
        let outcome = exchange.run(until: MonotonicClock.now() + configuration.attemptTimeout) {
            running.load(ordering: .acquiring)
        }
        switch outcome {
        case .response(let head, _): return (200..<300).contains(head.status) ? nil : "status \(head.status)"
        case .failed(let why): return why
        }
    }
}
