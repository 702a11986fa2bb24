import Wire

/// When a failed webhook delivery is tried again, and when it is given up.
package struct WebhookRetryPolicy: Equatable, Sendable {
    /// The wait after the first failure; each later one doubles it.
    package var firstBackoff: Duration = .milliseconds(500)
    /// The longest wait between two attempts.
    package var maxBackoff: Duration = .seconds(8)
    /// An event is dropped once this has passed since its first attempt
    /// and an attempt failed (a retry that would start later is not made).
    package var giveUpAfter: Duration = .seconds(30)
    package init(
        firstBackoff: Duration = .milliseconds(500), maxBackoff: Duration = .seconds(8), giveUpAfter: Duration = .seconds(30)
    ) {
        self.firstBackoff = firstBackoff
        self.maxBackoff = maxBackoff
        self.giveUpAfter = giveUpAfter
    }

    /// The wait after the `failures`th failure (1 for the first).
    package func backoff(afterFailures failures: Int) -> Duration {
        var wait = firstBackoff
        for _ in 1..<max(1, min(failures, 32)) where wait < maxBackoff { wait = wait * 2 }
        return min(wait, maxBackoff)
    }
}

/// The deliveries to one webhook URL, as a sans-IO value: events go in
/// (`enqueue`), the shell asks what to do now (`next`), performs the
/// request and reports how it went (`finished`). Events are delivered one
/// at a time, oldest first, so each room's events arrive in order; an
/// event that keeps failing holds the ones behind it for at most
/// `WebhookRetryPolicy.giveUpAfter`, then is dropped and counted. A full
/// queue drops the new event (counted), never blocks the caller.
package struct WebhookQueue: Sendable {
    package struct Delivery: Equatable, Sendable {
        package var body: [UInt8]
        /// Attempts made so far (0 before the first).
        package var attempts: Int
    }

    package enum Step: Equatable, Sendable {
        /// Send this body now, then call `finished`.
        case send([UInt8])
        /// Nothing is due before this time.
        case wait(until: Instant)
        /// Nothing queued.
        case idle
    }

    package struct Counts: Equatable, Sendable {
        /// Deliveries the receiver accepted (2xx).
        package var sent = 0
        /// Attempts that failed (no answer in time, a refused connection, a non-2xx status).
        package var failed = 0
        /// Events given up after `giveUpAfter`, or refused by a full queue.
        package var dropped = 0
        package init(sent: Int = 0, failed: Int = 0, dropped: Int = 0) {
            self.sent = sent
            self.failed = failed
            self.dropped = dropped
        }
    }

    package let capacity: Int
    package let policy: WebhookRetryPolicy
    private var pending: [Delivery] = []
    private var head = 0
    /// When the head event was first tried, and when it may be tried next.
    private var firstAttempt: Instant?
    private var retryAt: Instant?
    private var inFlight = false
    package private(set) var counts = Counts()

    package init(capacity: Int = 1000, policy: WebhookRetryPolicy = WebhookRetryPolicy()) {
        self.capacity = max(1, capacity)
        self.policy = policy
    }

    package var count: Int { pending.count - head }

    /// Queues `body`; false (and counted as dropped) when full.
    @discardableResult
    package mutating func enqueue(_ body: [UInt8]) -> Bool {
        guard count < capacity else {
            counts.dropped += 1
            return false
        }
        pending.append(Delivery(body: body, attempts: 0))
        return true
    }

    package mutating func next(now: Instant) -> Step {
        guard !inFlight, head < pending.count else { return head < pending.count ? .wait(until: now + policy.maxBackoff) : .idle }
        if let retryAt, now < retryAt { return .wait(until: retryAt) }
        if firstAttempt == nil { firstAttempt = now }
        inFlight = true
        pending[head].attempts += 1
        return .send(pending[head].body)
    }

    /// The outcome of the attempt `next` asked for.
    package mutating func finished(success: Bool, now: Instant) {
        guard inFlight, head < pending.count else { return }
        inFlight = false
        if success {
            counts.sent += 1
            pop()
            return
        }
        counts.failed += 1
        let wait = policy.backoff(afterFailures: pending[head].attempts)
        let started = firstAttempt ?? now
        if now + wait - started > policy.giveUpAfter {
            counts.dropped += 1
            pop()
        } else {
            retryAt = now + wait
        }
    }

    private mutating func pop() {
        head += 1
        firstAttempt = nil
        retryAt = nil
        // Compact once the consumed prefix is large: amortized O(1).
        if head >= 64, head * 2 >= pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }
}
