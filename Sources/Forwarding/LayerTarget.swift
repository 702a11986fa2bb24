/// Which layers of a simulcast track a subscriber should receive: the
/// allocator's output for one track, the selector's input.
public struct LayerTarget: Equatable, Sendable, CustomStringConvertible {
    /// The spatial layer (0 = lowest). Values outside
    /// `0..<SimulcastForwarder.maximumSpatialLayers` are clamped into it.
    public var spatial: Int
    /// The highest temporal layer (VP8 TID) forwarded;
    /// `LayerTarget.allTemporalLayers` forwards every one.
    public var temporal: Int

    /// Forward every temporal layer. Larger than any TID (VP8's is two
    /// bits), and far enough from `Int.max` that arithmetic on it cannot
    /// overflow.
    public static let allTemporalLayers = Int.max / 2

    public init(spatial: Int, temporal: Int = LayerTarget.allTemporalLayers) {
        self.spatial = spatial
        self.temporal = temporal
    }

    public var description: String {
        temporal >= Self.allTemporalLayers ? "S\(spatial)T*" : "S\(spatial)T\(temporal)"
    }
}
