import Wire

/// One incoming packet of a simulcast track, as the layer selector sees it:
/// the rewriter's view of the packet plus which layers it belongs to. A
/// plain value; building one allocates nothing.
package struct SimulcastPacket: Equatable, Sendable {
    package var source: SourcePacket
    /// The spatial layer (encoding), 0 = lowest. The worker knows it from
    /// the rid order or the SSRC group order. Outside
    /// `0..<SimulcastForwarder.maximumSpatialLayers` the packet is dropped
    /// (`SimulcastDropReason.spatialLayerOutOfRange`).
    package var spatialLayer: Int
    /// The VP8 TID (RFC 7741 section 4.2), nil when the descriptor has
    /// none (H264, or VP8 without the T bit): then only spatial selection
    /// applies.
    package var temporalLayer: UInt8?
    /// The VP8 Y bit: this picture depends only on the base temporal layer,
    /// so a decoder can start taking its temporal layer here.
    package var layerSync: Bool

    /// A decoder can start at this packet (first packet of a keyframe).
    package var isKeyframe: Bool { source.isSwitchPoint }

    package init(source: SourcePacket, spatialLayer: Int, temporalLayer: UInt8?, layerSync: Bool) {
        self.source = source
        self.spatialLayer = spatialLayer
        self.temporalLayer = temporalLayer
        self.layerSync = layerSync
    }

    /// Temporal layer and layer sync taken from the source's VP8
    /// descriptor, when it has one.
    package init(source: SourcePacket, spatialLayer: Int) {
        self.init(
            source: source, spatialLayer: spatialLayer, temporalLayer: source.vp8?.temporalLayerID,
            layerSync: source.vp8?.isLayerSync ?? false)
    }
}
