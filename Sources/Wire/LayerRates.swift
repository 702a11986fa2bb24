/// What each layer of a track costs a subscriber: per spatial layer, the
/// bitrate cumulative over temporal layers 0...t for each t present (what
/// forwarding (s, t) takes). The layer meter writes it and the bandwidth
/// allocator reads it every allocation round of every subscriber, so it is
/// a fixed-size value (issue #14: the nested arrays it replaces were most of
/// the server's heap allocations in steady state). Layers beyond
/// `spatialCapacity` x `temporalCapacity` are not representable: the meter
/// folds them into the highest, as VP8 (4 TIDs) and our three simulcast
/// encodings need no more.
package struct LayerRates: Sendable, Equatable, CustomStringConvertible {
    package static let spatialCapacity = 3
    package static let temporalCapacity = 4

    private var rates = InlineArray<12, Int64>(repeating: 0)
    private var temporalCounts = InlineArray<3, UInt8>(repeating: 0)
    /// Spatial layers present (trailing ones that are absent are not counted).
    package private(set) var spatialCount = 0

    package init() {}

    /// One rate (audio, or a single-layer video).
    package init(single rate: Bitrate) {
        append(spatialLayer: CollectionOfOne(rate))
    }

    /// From nested arrays (tests, readable literals); what exceeds the
    /// capacity is dropped.
    package init(_ layers: [[Bitrate]]) {
        for temporal in layers.prefix(Self.spatialCapacity) { append(spatialLayer: temporal) }
    }

    /// Adds the next spatial layer with its cumulative temporal rates (an
    /// empty one: a spatial layer not being sent). Ignored when full.
    package mutating func append<C: Collection<Bitrate>>(spatialLayer temporal: C) {
        addSpatialLayer()
        for rate in temporal { addTemporalRate(rate) }
    }

    /// Starts the next spatial layer, with no temporal layer yet; ignored
    /// when full.
    package mutating func addSpatialLayer() {
        guard spatialCount < Self.spatialCapacity else { return }
        temporalCounts[spatialCount] = 0
        spatialCount += 1
    }

    /// The next cumulative temporal rate of the last spatial layer;
    /// ignored when there is none or it is full.
    package mutating func addTemporalRate(_ rate: Bitrate) {
        guard spatialCount > 0 else { return }
        let s = spatialCount - 1
        let t = Int(temporalCounts[s])
        guard t < Self.temporalCapacity else { return }
        rates[s * Self.temporalCapacity + t] = rate.bitsPerSecond
        temporalCounts[s] = UInt8(t + 1)
    }

    /// Temporal layers present in spatial layer `spatial` (0 outside).
    package func temporalCount(spatial: Int) -> Int {
        guard spatial >= 0, spatial < spatialCount else { return 0 }
        return Int(temporalCounts[spatial])
    }

    /// The cumulative rate of (spatial, temporal); nil when not present.
    package subscript(spatial: Int, temporal: Int) -> Bitrate? {
        guard temporal >= 0, temporal < temporalCount(spatial: spatial) else { return nil }
        return Bitrate(bitsPerSecond: rates[spatial * Self.temporalCapacity + temporal])
    }

    package static func == (a: LayerRates, b: LayerRates) -> Bool {
        guard a.spatialCount == b.spatialCount else { return false }
        for s in 0..<a.spatialCount {
            let n = a.temporalCount(spatial: s)
            guard n == b.temporalCount(spatial: s) else { return false }
            for t in 0..<n where a[s, t] != b[s, t] { return false }
        }
        return true
    }

    package var description: String {
        let layers = (0..<spatialCount).map { s in
            "[" + (0..<temporalCount(spatial: s)).map { self[s, $0]!.description }.joined(separator: ", ") + "]"
        }
        return "[" + layers.joined(separator: ", ") + "]"
    }
}
