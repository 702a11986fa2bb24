import Wire

/// What a simulcast publisher sends now, per spatial and temporal layer:
/// the bitrate each layer takes, measured over windows of about a second.
/// The bandwidth allocator needs it (what a layer costs a subscriber) and
/// so does layer selection (a layer with no bitrate is not being sent).
/// Per packet it adds to one inline counter.
package struct LayerBitrateMeter: Sendable {
    package static let spatialLayers = 3
    package static let temporalLayers = 4

    package let window: Duration
    private var bytes = InlineArray<12, UInt64>(repeating: 0)
    private var rates = InlineArray<12, Int64>(repeating: 0)
    private var windowStart: Instant?

    package init(window: Duration = .seconds(1)) {
        self.window = window
    }

    /// One packet of `payloadBytes` on spatial layer `spatial` (0 lowest),
    /// temporal layer `temporal` (VP8 TID; 0 without one). Out-of-range
    /// layers are folded into the highest.
    package mutating func record(spatial: Int, temporal: Int, payloadBytes: Int, now: Instant) {
        if windowStart == nil { windowStart = now }
        let s = min(max(spatial, 0), Self.spatialLayers - 1)
        let t = min(max(temporal, 0), Self.temporalLayers - 1)
        bytes[s * Self.temporalLayers + t] &+= UInt64(max(payloadBytes, 0))
    }

    /// Closes the window when it is over; returns true when the rates
    /// changed (were recomputed).
    @discardableResult
    package mutating func poll(now: Instant) -> Bool {
        guard let start = windowStart else { return false }
        let elapsed = now - start
        guard elapsed >= window else { return false }
        let seconds = Double(max(elapsed.nanoseconds, 1)) / 1e9
        for i in 0..<12 {
            rates[i] = Int64(min(Double(bytes[i]) * 8 / seconds, 1e15))
            bytes[i] = 0
        }
        windowStart = now
        return true
    }

    /// The bitrate of spatial layer `spatial` up to and including temporal
    /// layer `temporal` (what a subscriber receiving that layer gets).
    package func bitrate(spatial: Int, upToTemporal temporal: Int) -> Bitrate {
        guard spatial >= 0, spatial < Self.spatialLayers else { return Bitrate(bitsPerSecond: 0) }
        var sum: Int64 = 0
        for t in 0...min(max(temporal, 0), Self.temporalLayers - 1) {
            sum &+= rates[spatial * Self.temporalLayers + t]
        }
        return Bitrate(bitsPerSecond: sum)
    }

    /// Whether spatial layer `spatial` carried anything in the last window.
    package func isSending(spatial: Int) -> Bool {
        bitrate(spatial: spatial, upToTemporal: Self.temporalLayers - 1).bitsPerSecond > 0
    }

    /// The bitrate of temporal layer `temporal` of spatial layer `spatial`
    /// alone, in the last window; zero out of range.
    package func rate(spatial: Int, temporal: Int) -> Int64 {
        guard (0..<Self.spatialLayers).contains(spatial), (0..<Self.temporalLayers).contains(temporal) else { return 0 }
        return rates[spatial * Self.temporalLayers + temporal]
    }

    /// Per spatial layer, the cumulative bitrate over temporal layers
    /// 0...t for each t: the shape the bandwidth allocator takes. Trailing
    /// temporal layers that carry nothing are left out. No allocation: it
    /// is read every allocation round of every subscriber.
    package var cumulativeRates: LayerRates {
        Self.cumulativeRates { s, t in rates[s * Self.temporalLayers + t] }
    }

    /// `cumulativeRates` of per-layer rates measured elsewhere (a relayed
    /// track's source reports them).
    package static func cumulativeRates(_ rate: (_ spatial: Int, _ temporal: Int) -> Int64) -> LayerRates {
        var out = LayerRates()
        for s in 0..<spatialLayers {
            var count = 0
            for t in 0..<temporalLayers where rate(s, t) > 0 { count = t + 1 }
            out.addSpatialLayer()
            var sum: Int64 = 0
            for t in 0..<count {
                sum &+= rate(s, t)
                out.addTemporalRate(Bitrate(bitsPerSecond: sum))
            }
        }
        return out
    }
}
