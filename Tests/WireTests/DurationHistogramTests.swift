import Testing
import Wire

/// Durations in fixed buckets: the bucket of a bound is inclusive
/// (Prometheus `le`), quantiles are bucket bounds, merging adds, and
/// histograms of other bounds are not mixed.
@Suite struct DurationHistogramTests {
    @Test func durationsFallInTheBucketOfTheirUpperBound() {
        // Worker delay bounds: 5, 10, 25, ... 50,000 µs.
        let h = DurationHistogram(.workerDelay)
        #expect(h.bucketCount == 13)
        #expect(h.bucket(nanoseconds: 0) == 0)
        #expect(h.bucket(nanoseconds: 5_000) == 0)
        #expect(h.bucket(nanoseconds: 5_001) == 1)
        #expect(h.bucket(nanoseconds: 1_000_000) == 7)
        #expect(h.bucket(nanoseconds: 1_000_001) == 8)
        #expect(h.bucket(nanoseconds: 50_000_000) == 11)
        #expect(h.bucket(nanoseconds: 50_000_001) == 12)
        #expect(DurationHistogram(.layerSwitch).bucketCount == 12)
    }

    @Test func quantilesAreBucketBounds() {
        var h = DurationHistogram(.workerDelay)
        #expect(h.quantileNanoseconds(0.99) == nil)
        for _ in 0..<98 { h.record(nanoseconds: 40_000) }  // 40 µs: the 50 µs bucket
        h.record(nanoseconds: 700_000)  // the 1 ms bucket
        h.record(nanoseconds: 80_000_000)  // past the last bound
        #expect(h.total == 100)
        #expect(h.quantileNanoseconds(0.5) == 50_000)
        #expect(h.quantileNanoseconds(0.98) == 50_000)
        #expect(h.quantileNanoseconds(0.99) == 1_000_000)
        #expect(h.quantileNanoseconds(1.0) == nil)
        // A clock that went backwards counts as no delay, not a negative one.
        h.record(nanoseconds: -5)
        #expect(h.count(inBucket: 0) == 1)
        #expect(h.count(inBucket: 99) == 0)

        var merged = DurationHistogram(.workerDelay)
        merged.merge(h)
        merged.merge(h)
        #expect(merged.total == 2 * h.total)
        #expect(merged.sumNanoseconds == 2 * h.sumNanoseconds)
        // Other bounds: not added.
        var switches = DurationHistogram(.layerSwitch)
        switches.merge(h)
        #expect(switches.total == 0)
    }

    @Test func durationsAreRecordedToTheNanosecond() {
        var h = DurationHistogram(.layerSwitch)
        h.record(.milliseconds(180))
        h.record(.milliseconds(420) + .nanoseconds(7))
        #expect(h.sumNanoseconds == 600_000_007)
        #expect(h.count(inBucket: 2) == 1 && h.count(inBucket: 4) == 1)
        #expect(h != DurationHistogram(.layerSwitch))
        var same = DurationHistogram(.layerSwitch)
        same.record(.milliseconds(180))
        same.record(.milliseconds(420) + .nanoseconds(7))
        #expect(same == h)
    }
}
