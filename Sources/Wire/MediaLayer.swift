/// One layer of a layered video track: a spatial layer (a simulcast
/// stream, 0 = lowest) and the highest temporal layer (VP8 TID) taken of
/// it. The bandwidth allocator gives one per subscription and the
/// simulcast selector forwards it: one type from allocation to forwarding.
package struct MediaLayer: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The spatial layer (0 = lowest).
    package var spatial: Int
    /// The highest temporal layer; `MediaLayer.allTemporalLayers` takes
    /// every one.
    package var temporal: Int

    /// Every temporal layer. Larger than any TID (VP8's is two bits), and
    /// far enough from `Int.max` that arithmetic on it cannot overflow.
    package static let allTemporalLayers = Int.max / 2

    package init(spatial: Int, temporal: Int = MediaLayer.allTemporalLayers) {
        self.spatial = spatial
        self.temporal = temporal
    }

    /// Lower spatial layers first, then lower temporal layers.
    package static func < (a: MediaLayer, b: MediaLayer) -> Bool { (a.spatial, a.temporal) < (b.spatial, b.temporal) }

    package var description: String {
        temporal >= Self.allTemporalLayers ? "S\(spatial)T*" : "S\(spatial)T\(temporal)"
    }
}
