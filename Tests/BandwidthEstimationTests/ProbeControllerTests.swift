import BandwidthEstimation
import Testing
import Wire

@Suite struct ProbeControllerTests {
    let t0 = Instant(nanoseconds: 10_000_000_000)

    @Test func schedulesAPacedClusterAboveTheTarget() {
        var prober = ProbeController()
        prober.request(target: .kbps(1200), estimate: .kbps(600), usage: .normal, now: t0)
        #expect(prober.state == .probing(target: .kbps(1200)))
        #expect(prober.nextDeadline == t0 + .milliseconds(10))
        #expect(prober.poll(now: t0) == nil)
        // Total 1.25 × 1200k = 1500k, of which media carries 600k: 900k of
        // padding, 1125 bytes per 10 ms slice.
        var total = 0
        var slices = 0
        var now = t0
        while now < t0 + .milliseconds(100) {
            now += .milliseconds(10)
            if let send = prober.poll(now: now) {
                #expect(send.bytes == 1125)
                total += send.bytes
                slices += 1
            }
        }
        #expect(slices == 10)
        #expect(total == 11250)
        #expect(prober.state == .measuring(target: .kbps(1200)))
        #expect(prober.nextDeadline == t0 + .milliseconds(1100))
    }

    @Test func doesNotProbeWhileOverusingOrWhenTheEstimateSuffices() {
        var prober = ProbeController()
        prober.request(target: .kbps(1200), estimate: .kbps(600), usage: .overusing, now: t0)
        #expect(prober.state == .idle)
        prober.request(target: .kbps(600), estimate: .kbps(600), usage: .normal, now: t0)
        #expect(prober.state == .idle)
        #expect(prober.nextDeadline == nil)
        #expect(prober.poll(now: t0) == nil)
    }

    @Test func successfulProbeRaisesTheEstimate() throws {
        var session = CongestionSession(link: SimulatedLink(capacity: .mbps(5)))
        session.run(for: .seconds(2))
        let before = session.estimator.estimate
        #expect(before < .kbps(800))
        var prober = ProbeController()
        prober.request(target: .kbps(2000), estimate: before, usage: session.estimator.usage, now: session.now)
        session.prober = prober
        session.run(for: .milliseconds(600))
        guard case .succeeded(let measured) = try #require(session.probeOutcomes.first) else {
            Issue.record("probe failed: \(session.probeOutcomes)")
            return
        }
        #expect(measured >= .kbps(2000))
        #expect(session.estimator.estimate >= .kbps(2000))
        #expect(session.prober?.state == .idle)
        #expect(session.prober?.backoffUntil == nil)
    }

    @Test func failedProbeBacksOffExponentially() throws {
        var session = CongestionSession(link: SimulatedLink(capacity: .kbps(900)))
        session.run(for: .seconds(2))
        var prober = ProbeController()
        prober.request(target: .mbps(3), estimate: session.estimator.estimate, usage: .normal, now: session.now)
        session.prober = prober
        session.run(for: .milliseconds(600))
        guard case .failed(let measured) = try #require(session.probeOutcomes.first) else {
            Issue.record("probe succeeded")
            return
        }
        #expect(try #require(measured) < .mbps(1))
        #expect(session.estimator.estimate < .mbps(1))
        var after = try #require(session.prober)
        let firstBackoff = try #require(after.backoffUntil)
        // A request inside the backoff is ignored.
        after.request(target: .mbps(3), estimate: .kbps(600), usage: .normal, now: firstBackoff - .milliseconds(1))
        #expect(after.state == .idle)
        // The next failure (here: no feedback at all) waits twice as long.
        after.request(target: .mbps(3), estimate: .kbps(600), usage: .normal, now: firstBackoff)
        #expect(after.state == .probing(target: .mbps(3)))
        let timedOutAt = firstBackoff + .milliseconds(1100)
        _ = after.poll(now: firstBackoff + .milliseconds(100))
        _ = after.poll(now: timedOutAt)
        #expect(after.state == .idle)
        #expect(after.backoffUntil == timedOutAt + .seconds(4))
    }
}
