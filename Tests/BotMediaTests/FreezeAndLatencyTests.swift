import BotMedia
import Testing
import Wire

@Test func freezeDetectorCountsGapsLongerThanTheThreshold() {
    var detector = FreezeDetector()
    let times = [0, 33, 66, 700, 733, 766, 1266, 1300, 2000]  // ms
    for t in times { detector.frame(at: Instant(nanoseconds: Int64(t) * 1_000_000)) }
    // 66 -> 700 (634 ms) and 1300 -> 2000 (700 ms); 766 -> 1266 is exactly 500.
    #expect(detector.freezeCount == 2)
    #expect(detector.totalFreezeDuration == .milliseconds(1334))
    #expect(detector.longestGap == .milliseconds(700))
    #expect(detector.frames == 9)
}

@Test func freezeDetectorIgnoresTimeGoingBackwards() {
    var detector = FreezeDetector(threshold: .milliseconds(100))
    detector.frame(at: Instant(nanoseconds: 1_000_000_000))
    detector.frame(at: Instant(nanoseconds: 0))
    detector.frame(at: Instant(nanoseconds: 1_050_000_000))
    #expect(detector.freezeCount == 0)
    #expect(detector.longestGap == .milliseconds(50))
}

@Test func latencySamplesGiveNearestRankPercentiles() {
    var samples = LatencySamples(capacity: 1000)
    #expect(samples.percentile(50) == nil)
    for ms in 1...100 { samples.record(.milliseconds(ms)) }
    #expect(samples.percentile(50) == .milliseconds(50))
    #expect(samples.percentile(95) == .milliseconds(95))
    #expect(samples.percentile(99) == .milliseconds(99))
    #expect(samples.percentile(100) == .milliseconds(100))
    #expect(samples.percentile(0) == .milliseconds(1))
    #expect(samples.mean == .microseconds(50_500))
    #expect(samples.minimum == .milliseconds(1) && samples.maximum == .milliseconds(100))
    let summary = samples.summary
    #expect(summary?.p50 == .milliseconds(50) && summary?.p99 == .milliseconds(99))
}

@Test func latencySamplesStayBoundedAndRepresentative() {
    var samples = LatencySamples(capacity: 500)
    for i in 0..<100_000 { samples.record(.milliseconds(i % 1000)) }
    #expect(samples.count == 100_000)
    #expect(samples.maximum == .milliseconds(999))
    // A uniform reservoir of a uniform stream: the median near 500 ms.
    let p50 = samples.percentile(50) ?? .zero
    #expect(p50 > .milliseconds(400) && p50 < .milliseconds(600))
}

@Test func freezeInProgressCountsUntilTheGivenEnd() {
    var detector = FreezeDetector()
    for t in [0, 33, 66] { detector.frame(at: Instant(nanoseconds: Int64(t) * 1_000_000)) }
    // No closing frame: before measured(until:) the stall is invisible.
    #expect(detector.freezeCount == 0)
    let end = Instant(nanoseconds: 3_066_000_000)
    let measured = detector.measured(until: end)
    #expect(measured.freezeCount == 1)
    #expect(measured.totalFreezeDuration == .seconds(3))
    #expect(measured.longestGap == .seconds(3))
    #expect(measured.frames == 3)
    #expect(detector.currentGap(at: end) == .seconds(3))
    // Within the threshold it is no freeze; before the first frame nothing.
    #expect(detector.measured(until: Instant(nanoseconds: 400_000_000)).freezeCount == 0)
    #expect(FreezeDetector().measured(until: end).freezeCount == 0)
    #expect(FreezeDetector().currentGap(at: end) == nil)
}
