import Testing

@testable import BandwidthEstimation

@Suite struct AcknowledgedBitrateTests {
    /// Feeds `packetsPerSecond` packets of `size` bytes for `seconds`, in
    /// feedback batches of 50 ms as receivers send them.
    static func feed(
        _ a: inout AcknowledgedBitrate, packetsPerSecond: Int, size: Int, seconds: Int, from start: Int64 = 0
    )
        -> Int64
    {
        let gap = 1_000_000_000 / Int64(packetsPerSecond)
        var t = start
        for i in 0..<(packetsPerSecond * seconds) {
            a.add(arrival: t, size: size)
            t += gap
            if i % max(packetsPerSecond / 20, 1) == 0 { a.update() }
        }
        a.update()
        return t
    }

    @Test func theRateIsTheBytesOfTheLastWindow() throws {
        var a = AcknowledgedBitrate()
        _ = Self.feed(&a, packetsPerSecond: 300, size: 1000, seconds: 10)
        let rate = try #require(a.rate)
        #expect(abs(rate - 2_400_000) < 2_400_000 * 0.01, "\(rate)")
    }

    /// The ring holds about one window of samples: 150 at 300 packets/s
    /// fit the first 256; 2,000 packets/s (1,000 per window) need 1,024.
    /// Old samples are overwritten in place from then on.
    @Test func theRingHoldsAWindowAndStopsGrowing() throws {
        var a = AcknowledgedBitrate()
        var t = Self.feed(&a, packetsPerSecond: 300, size: 1000, seconds: 5)
        #expect(a.capacity == 256)
        t = Self.feed(&a, packetsPerSecond: 2000, size: 500, seconds: 5, from: t)
        #expect(a.capacity == 1024)
        let rate = try #require(a.rate)
        #expect(abs(rate - 8_000_000) < 8_000_000 * 0.01, "\(rate)")
        _ = Self.feed(&a, packetsPerSecond: 2000, size: 500, seconds: 20, from: t)
        #expect(a.capacity == 1024)
        // A window of more packets than the ring's maximum keeps the newest.
        var flood = AcknowledgedBitrate()
        _ = Self.feed(&flood, packetsPerSecond: 20_000, size: 100, seconds: 2)
        #expect(flood.capacity == AcknowledgedBitrate.maximumSamples)
        #expect(flood.rate != nil)
    }
}
