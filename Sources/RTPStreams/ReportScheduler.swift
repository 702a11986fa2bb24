import Wire

/// Default RTCP report intervals for an SFU.
///
/// RFC 3550 section 6.3 scales the interval with session size and a 5 %
/// RTCP bandwidth share, with a 5 s minimum that RFC 3550 section 6.2 and
/// RFC 8108/8834 let WebRTC endpoints shrink. An SFU talks to each peer
/// over one transport with few sources, and congestion control and loss
/// recovery want fresh reports, so we use fixed intervals as libwebrtc
/// does: 1 s for a stream of video, 5 s for audio alone.
package enum RTCPReportInterval {
    package static let video: Duration = .seconds(1)
    package static let audio: Duration = .seconds(5)
}

/// What `ReportScheduler.poll` says to do.
package enum ReportSchedulerOutput: Equatable, Sendable {
    /// Send a report now; the following one is due at `next`.
    case sendReport(next: Instant)
    /// Nothing to send before `until`.
    case wait(until: Instant)
}

/// When to send RTCP reports: RFC 3550 section 6.3 simplified for an SFU.
///
/// Each interval is the configured one times a factor drawn uniformly from
/// [0.5, 1.5] (section 6.3.1), so that reports of many streams do not
/// synchronise. Left out on purpose: the session-size and bandwidth scaling
/// and the e - 3/2 compensation (they matter for large multicast groups,
/// not for one SFU leg), timer reconsideration and BYE reconsideration.
/// The first report comes after half an interval (randomised the same
/// way), the "initial" halving of section 6.3.
///
/// The random source is injected: the shell passes a system generator,
/// tests a seeded one.
package struct ReportScheduler<Random: RandomNumberGenerator> {
    package var interval: Duration
    package private(set) var nextDeadline: Instant
    private var random: Random

    package init(interval: Duration, random: Random, now: Instant) {
        self.interval = interval
        self.random = random
        self.nextDeadline = now
        nextDeadline = now + randomized(interval / 2)
    }

    /// Says whether a report is due at `now`; when it is, the next deadline
    /// is set from `now` (a late poll does not cause a burst).
    package mutating func poll(now: Instant) -> ReportSchedulerOutput {
        guard now >= nextDeadline else { return .wait(until: nextDeadline) }
        nextDeadline = now + randomized(interval)
        return .sendReport(next: nextDeadline)
    }

    /// `base` times a uniform factor in [0.5, 1.5], to the nanosecond.
    private mutating func randomized(_ base: Duration) -> Duration {
        let ns = UInt64(max(0, base.nanoseconds))
        let spread = UInt64.random(in: 0...ns, using: &random)
        return .nanoseconds(Int64(clamping: ns / 2 + spread))
    }
}
