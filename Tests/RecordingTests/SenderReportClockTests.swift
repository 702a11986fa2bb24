import Recording
import Testing

/// NTP UQ32.32 from seconds and microseconds.
private func ntp(_ seconds: UInt64, _ microseconds: UInt64 = 0) -> UInt64 {
    seconds << 32 | (microseconds << 32) / 1_000_000
}

@Test func mapsRTPTimestampsToTheSendersWallClock() {
    var clock = SenderReportClock(clockRate: 90_000)
    #expect(clock.ntpMicroseconds(of: 1000) == nil)
    clock.senderReport(ntp: ntp(100), rtpTimestamp: 90_000)
    #expect(clock.ntpMicroseconds(of: 90_000) == 100_000_000)
    #expect(clock.ntpMicroseconds(of: 180_000) == 101_000_000)
    // Before the report too: the mapping is linear.
    #expect(clock.ntpMicroseconds(of: 45_000) == 99_500_000)
}

@Test func mapsAcrossTheTimestampWrap() {
    var clock = SenderReportClock(clockRate: 48_000)
    clock.senderReport(ntp: ntp(10), rtpTimestamp: UInt32.max - 479)
    // 480 ticks before the wrap, 480 after: 20 ms later.
    #expect(clock.ntpMicroseconds(of: 480) == 10_020_000)
}

@Test func framesKeepExactSpacingThroughJitteryReports() {
    var clock = SenderReportClock(clockRate: 48_000)
    clock.senderReport(ntp: ntp(10), rtpTimestamp: 0)
    #expect(clock.frameMicroseconds(of: 0) == 10_000_000)
    // A later report 30 ms off (a paced sender's extrapolation).
    clock.senderReport(ntp: ntp(11, 30_000), rtpTimestamp: 48_000)
    #expect(clock.frameMicroseconds(of: 48_960) == 11_020_000)
    // Beyond the allowed drift, the anchor follows the report.
    clock.senderReport(ntp: ntp(12, 100_000), rtpTimestamp: 96_000)
    #expect(clock.frameMicroseconds(of: 96_000) == 12_100_000)
    #expect(clock.frameMicroseconds(of: 96_960) == 12_120_000)
}

@Test func keepsTheReportsFractionOfASecond() {
    // Half a second is 0x8000_0000 in the fraction (RFC 5905 section 6).
    #expect(SenderReportClock.microseconds(ntp: 3 << 32 | 0x8000_0000) == 3_500_000)
    #expect(SenderReportClock.microseconds(ntp: ntp(0, 1)) == 1)
}
