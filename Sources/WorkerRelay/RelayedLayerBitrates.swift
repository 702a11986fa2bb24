/// What a relayed track's publisher sends now, per spatial and temporal
/// layer, as its source worker measures it: the far side's allocator
/// prices layers by it, including the ones its relay does not carry (a
/// relay carries only the layers its far side wants, so the far side
/// cannot measure the others). Bits per second, saturating at
/// `UInt32.max` (about 4.3 Gbit/s), spatial-major: `spatialLayers` spatial
/// layers of `temporalLayers` temporal layers each, not cumulative.
package struct RelayedLayerBitrates: Equatable, Sendable {
    package static let spatialLayers = 3
    package static let temporalLayers = 4
    package static let count = spatialLayers * temporalLayers

    private var rates = InlineArray<12, UInt32>(repeating: 0)

    package init() {}

    /// `rate(spatial, temporal)` in bits per second, clamped to what the
    /// message holds.
    package init(_ rate: (_ spatial: Int, _ temporal: Int) -> Int64) {
        for s in 0..<Self.spatialLayers {
            for t in 0..<Self.temporalLayers {
                rates[s * Self.temporalLayers + t] = UInt32(clamping: max(rate(s, t), 0))
            }
        }
    }

    /// Bits per second of temporal layer `temporal` of spatial layer
    /// `spatial` (that temporal layer alone); zero out of range.
    package subscript(spatial: Int, temporal: Int) -> UInt32 {
        get {
            guard (0..<Self.spatialLayers).contains(spatial), (0..<Self.temporalLayers).contains(temporal) else { return 0 }
            return rates[spatial * Self.temporalLayers + temporal]
        }
        set {
            guard (0..<Self.spatialLayers).contains(spatial), (0..<Self.temporalLayers).contains(temporal) else { return }
            rates[spatial * Self.temporalLayers + temporal] = newValue
        }
    }

    package static func == (a: Self, b: Self) -> Bool {
        for i in 0..<count where a.rates[i] != b.rates[i] { return false }
        return true
    }
}
