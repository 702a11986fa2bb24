import Wire

/// The handshake retransmission timer of RFC 6347 section 4.2.4, kept on
/// the caller's clock instead of OpenSSL's.
///
/// Armed when a flight goes out and a reply is expected; each expiry
/// retransmits and doubles the interval (section 4.2.4.1: initial 1 s,
/// doubling up to at least the 60 s of RFC 6298); when the deadline after
/// the last allowed retransmission passes, the handshake has failed.
struct RetransmissionTimer: Equatable {
    let initialInterval: Duration
    let maximumInterval: Duration
    let maximumRetransmissions: Int

    private(set) var deadline: Instant? = nil
    private(set) var interval: Duration
    private(set) var retransmissions = 0

    init(initialInterval: Duration, maximumInterval: Duration, maximumRetransmissions: Int) {
        self.initialInterval = initialInterval
        self.maximumInterval = max(initialInterval, maximumInterval)
        self.maximumRetransmissions = max(0, maximumRetransmissions)
        self.interval = initialInterval
    }

    enum Expiry: Equatable {
        case notYet
        case retransmit
        case giveUp
    }

    /// A new flight left at `now`: start over from the initial interval.
    mutating func arm(now: Instant) {
        interval = initialInterval
        retransmissions = 0
        deadline = now + interval
    }

    /// The flight was answered (or the handshake ended): no deadline.
    mutating func disarm() {
        deadline = nil
        interval = initialInterval
        retransmissions = 0
    }

    /// What to do at `now`. On `.retransmit` the next deadline is already
    /// set, twice as far out (capped).
    mutating func expire(now: Instant) -> Expiry {
        guard let deadline, now >= deadline else { return .notYet }
        if retransmissions >= maximumRetransmissions {
            self.deadline = nil
            return .giveUp
        }
        retransmissions += 1
        interval = min(interval * 2, maximumInterval)
        self.deadline = now + interval
        return .retransmit
    }
}
