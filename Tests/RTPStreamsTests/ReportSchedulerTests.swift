import SFUTesting
import Testing
import Wire

@testable import RTPStreams

@Test func randomisesIntervalsBetweenHalfAndOneAndAHalf() {
    var clock = VirtualClock()
    var scheduler = ReportScheduler(interval: RTCPReportInterval.video, random: SeededGenerator(state: 42), now: clock.now)
    let firstGap = scheduler.nextDeadline - clock.now
    #expect(firstGap >= .milliseconds(250) && firstGap <= .milliseconds(750))
    var total: Duration = .zero
    var sent = 0
    #expect(scheduler.poll(now: clock.now) == .wait(until: scheduler.nextDeadline))
    for _ in 0..<1000 {
        clock.advance(to: scheduler.nextDeadline)
        let before = clock.now
        guard case .sendReport(let next) = scheduler.poll(now: clock.now) else {
            Issue.record("a report is due at its deadline")
            return
        }
        sent += 1
        let gap = next - before
        #expect(gap >= .milliseconds(500) && gap <= .milliseconds(1500))
        total += gap
    }
    #expect(sent == 1000)
    // The mean of 1000 uniform draws over [0.5, 1.5] s is within 50 ms of 1 s.
    let mean = total / 1000
    #expect(mean > .milliseconds(950) && mean < .milliseconds(1050))
}

@Test func sameSeedGivesSameDeadlines() {
    var a = ReportScheduler(interval: RTCPReportInterval.audio, random: SeededGenerator(state: 7), now: .zero)
    var b = ReportScheduler(interval: RTCPReportInterval.audio, random: SeededGenerator(state: 7), now: .zero)
    var c = ReportScheduler(interval: RTCPReportInterval.audio, random: SeededGenerator(state: 8), now: .zero)
    for _ in 0..<10 {
        let now = a.nextDeadline
        #expect(a.poll(now: now) == b.poll(now: now))
        _ = c.poll(now: now)
    }
    #expect(a.nextDeadline != c.nextDeadline)
}

@Test func aLatePollSchedulesFromNow() {
    var scheduler = ReportScheduler(interval: .seconds(1), random: SeededGenerator(state: 1), now: .zero)
    let late = scheduler.nextDeadline + .seconds(10)
    guard case .sendReport(let next) = scheduler.poll(now: late) else {
        Issue.record("due")
        return
    }
    #expect(next >= late + .milliseconds(500))
    #expect(scheduler.poll(now: late) == .wait(until: next))
}
