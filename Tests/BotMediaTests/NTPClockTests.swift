import BotMedia
import Testing
import Wire

@Test func ntpClockFromUnixTimeAddsTheNineteenHundredOffsetAndHalfSeconds() {
    let clock = NTPClock(unixNanoseconds: 1_500_000_000, epoch: Instant(nanoseconds: 7))
    // 1 s + 2,208,988,800 s in the high word, 0.5 s = 0x8000_0000 in the low.
    #expect(clock.base == UInt64(2_208_988_801) << 32 | 0x8000_0000)
    #expect(clock.ntp(at: Instant(nanoseconds: 7)) == clock.base)
    #expect(clock.ntp(at: Instant(nanoseconds: 7 + 250_000_000)) == clock.base + 0x4000_0000)
}

@Test func ntpClockConvertsNanosecondsExactlyAndFloorsTheFraction() {
    let clock = NTPClock(base: 1 << 32, epoch: .zero)
    #expect(clock.ntp(at: Instant(nanoseconds: 1_000_000_000)) == 2 << 32)
    // 1 ns = 4.29 fraction units, floored to 4.
    #expect(clock.ntp(at: Instant(nanoseconds: 1)) == 1 << 32 | 4)
    // 20 ms = 85,899,345.92 units.
    #expect(clock.ntp(at: Instant(nanoseconds: 20_000_000)) == 1 << 32 | 85_899_345)
    // Instants before the epoch clamp to it.
    #expect(clock.ntp(at: Instant(nanoseconds: -5_000_000_000)) == 1 << 32)
}

@Test func absSendTimeIsSixPointEighteenSecondsModulo64() {
    let clock = NTPClock(base: 1 << 32, epoch: .zero)
    #expect(clock.absSendTime(at: Instant(nanoseconds: 500_000_000)) == 0x06_0000)  // 1.5 s
    // 64 s wrap: 65 s reads as 1 s.
    #expect(clock.absSendTime(at: Instant(nanoseconds: 64_000_000_000)) == 0x04_0000)
    #expect(clock.absSendTime(at: Instant(nanoseconds: 250_000_000)) == 0x05_0000)  // 1.25 s
}

@Test func elapsedIsExactForBinaryFractionsAndRejectsFutureAndAncientTimes() {
    let clock = NTPClock(base: 5000 << 32, epoch: .zero)
    let at = Instant(nanoseconds: 1_500_000_000)
    #expect(clock.elapsed(since: 5000 << 32, at: at) == .milliseconds(1500))
    #expect(clock.elapsed(since: 5001 << 32 | 0x4000_0000, at: at) == .milliseconds(250))
    // Up to 1 ms in the future reads as zero (rounding between machines' readings).
    #expect(clock.elapsed(since: clock.ntp(at: at) + 0x0010_0000, at: at) == .zero)  // 0.24 ms ahead
    #expect(clock.elapsed(since: clock.ntp(at: at) + 0x0100_0000, at: at) == nil)  // 3.9 ms ahead
    #expect(clock.elapsed(since: 0, at: at) == nil)  // 5,001.5 s: more than an hour back
}
