import Testing
import Wire

@testable import DTLS

@Test func timerDoublesUpToTheCapThenGivesUp() {
    var timer = RetransmissionTimer(initialInterval: .seconds(1), maximumInterval: .seconds(60), maximumRetransmissions: 8)
    let t0 = Instant(nanoseconds: 5_000_000_000)
    #expect(timer.deadline == nil)
    #expect(timer.expire(now: t0) == .notYet)
    timer.arm(now: t0)
    var now = t0
    var gaps: [Int64] = []
    while let deadline = timer.deadline {
        #expect(timer.expire(now: deadline - .nanoseconds(1)) == .notYet)
        gaps.append(Int64((deadline - now) / .seconds(1)))
        now = deadline
        let expiry = timer.expire(now: now)
        #expect(expiry == (gaps.count <= 8 ? .retransmit : .giveUp))
    }
    #expect(gaps == [1, 2, 4, 8, 16, 32, 60, 60, 60])
    #expect(timer.retransmissions == 8)
}

@Test func rearmingStartsOverFromTheInitialInterval() {
    var timer = RetransmissionTimer(initialInterval: .seconds(1), maximumInterval: .seconds(60), maximumRetransmissions: 6)
    timer.arm(now: .zero)
    #expect(timer.expire(now: Instant.zero + .seconds(1)) == .retransmit)
    #expect(timer.expire(now: Instant.zero + .seconds(3)) == .retransmit)
    #expect(timer.interval == .seconds(4))
    timer.arm(now: Instant.zero + .seconds(4))
    #expect(timer.deadline == Instant.zero + .seconds(5))
    #expect(timer.retransmissions == 0)
    timer.disarm()
    #expect(timer.deadline == nil)
    #expect(timer.expire(now: Instant.zero + .seconds(100)) == .notYet)
}

@Test func lateTimeoutCallSchedulesFromTheActualTime() {
    var timer = RetransmissionTimer(initialInterval: .seconds(1), maximumInterval: .seconds(60), maximumRetransmissions: 6)
    timer.arm(now: .zero)
    // The loop woke 300 ms late: the next interval counts from now.
    #expect(timer.expire(now: Instant.zero + .milliseconds(1300)) == .retransmit)
    #expect(timer.deadline == Instant.zero + .milliseconds(3300))
}
