import Testing
import Wire

@Suite struct LayerRatesTests {
    @Test func nestedArraysRoundTrip() {
        let rates = LayerRates([[.kbps(100), .kbps(150)], [], [.mbps(1)]])
        #expect(rates.spatialCount == 3)
        #expect(rates.temporalCount(spatial: 0) == 2 && rates.temporalCount(spatial: 1) == 0)
        #expect(rates[0, 1] == .kbps(150) && rates[2, 0] == .mbps(1))
        // Outside what is present: nil, never a trap.
        #expect(rates[1, 0] == nil && rates[0, 2] == nil && rates[-1, 0] == nil && rates[3, 0] == nil)
        #expect(rates.temporalCount(spatial: -1) == 0 && rates.temporalCount(spatial: 7) == 0)
        #expect(rates.description == "[[\(Bitrate.kbps(100)), \(Bitrate.kbps(150))], [], [\(Bitrate.mbps(1))]]")
    }

    @Test func beyondTheCapacityIsDropped() {
        let five = (1...5).map { Bitrate.kbps($0) }
        let rates = LayerRates([five, five, five, five])
        #expect(rates.spatialCount == LayerRates.spatialCapacity)
        #expect(rates.temporalCount(spatial: 2) == LayerRates.temporalCapacity)
        #expect(rates[2, 3] == .kbps(4))
        var more = rates
        more.addSpatialLayer()
        more.addTemporalRate(.kbps(9))
        #expect(more == rates)
    }

    @Test func equalityLooksOnlyAtWhatIsPresent() {
        var a = LayerRates([[.kbps(1), .kbps(2)]])
        let b = LayerRates([[.kbps(1), .kbps(2)]])
        #expect(a == b)
        a.addTemporalRate(.kbps(3))
        #expect(a != b)
        #expect(LayerRates([[], []]) != LayerRates([[]]))
        #expect(LayerRates(single: .kbps(32)) == LayerRates([[.kbps(32)]]))
        #expect(LayerRates() == LayerRates([]))
    }
}
