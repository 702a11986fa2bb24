import Testing
import Wire

@testable import Webhooks

@Suite struct WebhookQueueTests {
    let t0 = Instant(nanoseconds: 1_000_000_000)
    func at(_ ms: Int64) -> Instant { t0 + .milliseconds(ms) }

    @Test func deliversOneAtATimeInOrder() {
        var q = WebhookQueue(capacity: 4)
        q.enqueue([1])
        q.enqueue([2])
        #expect(q.next(now: t0) == .send([1]))
        q.finished(success: true, now: t0)
        #expect(q.next(now: t0) == .send([2]))
        q.finished(success: true, now: t0)
        #expect(q.next(now: t0) == .idle)
        #expect(q.counts == .init(sent: 2, failed: 0, dropped: 0))
    }

    @Test func retriesWithDoublingBackoffThenGivesUp() {
        let policy = WebhookRetryPolicy(
            firstBackoff: .milliseconds(100), maxBackoff: .milliseconds(400), giveUpAfter: .seconds(1))
        #expect(policy.backoff(afterFailures: 1) == .milliseconds(100))
        #expect(policy.backoff(afterFailures: 2) == .milliseconds(200))
        #expect(policy.backoff(afterFailures: 3) == .milliseconds(400))
        #expect(policy.backoff(afterFailures: 9) == .milliseconds(400))
        var q = WebhookQueue(capacity: 4, policy: policy)
        q.enqueue([1])
        q.enqueue([2])
        var now = t0
        var attempts = 0
        // Each failure waits its backoff; the event behind waits too.
        while case .send(let body) = q.next(now: now) {
            if body == [2] { break }
            attempts += 1
            q.finished(success: false, now: now)
            guard case .wait(let until) = q.next(now: now) else { break }
            now = until
        }
        // 0, 100, 300, 700 ms; the retry after 700+400 would pass 1 s.
        #expect(attempts == 4)
        #expect(q.counts.failed == 4)
        #expect(q.counts.dropped == 1)
        #expect(now == at(700))
    }

    @Test func aRetryThatSucceedsKeepsTheOrder() {
        var q = WebhookQueue(capacity: 4, policy: WebhookRetryPolicy(firstBackoff: .milliseconds(50)))
        q.enqueue([1])
        q.enqueue([2])
        #expect(q.next(now: t0) == .send([1]))
        q.finished(success: false, now: t0)
        #expect(q.next(now: at(10)) == .wait(until: at(50)))
        #expect(q.next(now: at(50)) == .send([1]))
        q.finished(success: true, now: at(60))
        #expect(q.next(now: at(60)) == .send([2]))
    }

    @Test func aFullQueueDropsTheNewEventAndCountsIt() {
        var q = WebhookQueue(capacity: 2)
        let first = q.enqueue([1])
        let second = q.enqueue([2])
        let third = q.enqueue([3])
        #expect(first && second && !third)
        #expect(q.count == 2)
        #expect(q.counts.dropped == 1)
    }

    @Test func manyEventsStayBounded() {
        var q = WebhookQueue(capacity: 100)
        for i in 0..<10_000 {
            q.enqueue([UInt8(i & 0xFF)])
            if case .send = q.next(now: t0) { q.finished(success: true, now: t0) }
        }
        #expect(q.count == 0)
        #expect(q.counts.sent == 10_000)
    }
}
