import Testing
import Wire

@testable import Forwarding

@Suite struct SenderReportClockTests {
    @Test func offsetMapsOneLayersTimestampsOntoAnothers() {
        // A: RTP 1000 at NTP 10.5 s. B: RTP 500000 at NTP 10.0 s.
        let a = SenderReportClock(ssrc: SSRC(1), ntp: 10 << 32 | 0x8000_0000, rtpTimestamp: 1000)
        let b = SenderReportClock(ssrc: SSRC(2), ntp: 10 << 32, rtpTimestamp: 500_000)
        // At NTP 10.5 s B reads 500000 + 45000 = 545000, A 1000.
        let bToA = b.timestampOffset(to: a, clockRate: 90_000)
        #expect(545_000 &+ bToA == 1000)
        let aToB = a.timestampOffset(to: b, clockRate: 90_000)
        #expect(1000 &+ aToB == 545_000)
        #expect(bToA &+ aToB == 0)
    }

    @Test func wrapsRatherThanTrapsOnExtremeReports() {
        let a = SenderReportClock(ssrc: SSRC(1), ntp: .max, rtpTimestamp: .max)
        let b = SenderReportClock(ssrc: SSRC(2), ntp: 0, rtpTimestamp: 0)
        // NTP difference -1 fraction unit: under one tick.
        #expect(a.timestampOffset(to: b, clockRate: .max) == 1)
        let c = SenderReportClock(ssrc: SSRC(3), ntp: 1 << 63, rtpTimestamp: 7)
        _ = c.timestampOffset(to: b, clockRate: .max)
        _ = b.timestampOffset(to: c, clockRate: .max)
    }
}
