/// Why the simulcast selector did not want a packet. The rewriter's
/// `DropReason` then says `.notForwarded` (or its own reason, such as
/// `.paddingOnly`); this says which selector rule chose it.
package enum SimulcastDropReason: Equatable, Sendable {
    /// No target: the subscription is paused.
    case paused
    /// The packet's spatial layer is outside `0..<maximumSpatialLayers`.
    case spatialLayerOutOfRange
    /// Another spatial layer than the one forwarded, and not a keyframe
    /// that completes a pending switch.
    case otherSpatialLayer
    /// Nothing is forwarded yet (start, resume): waiting for a keyframe of
    /// the wanted layer.
    case waitingForKeyframe
    /// A picture of a temporal layer above the one forwarded.
    case temporalLayerAbove
}

/// What the forwarder decided for one packet and what the caller should do
/// besides: an `Equatable` value (STYLE item 3).
package struct SimulcastOutcome: Equatable, Sendable {
    /// The rewriter's decision: drop, or forward with these header values.
    package var decision: ForwardDecision
    /// The spatial layer for which the caller should send a PLI upstream
    /// now. Already throttled per layer (at most one per
    /// `Configuration.keyframeRequestInterval`), so the caller may just
    /// send it.
    package var keyframeRequest: Int?
    /// When the selector chose to drop the packet, which rule did.
    package var selectorDrop: SimulcastDropReason?

    package init(decision: ForwardDecision, keyframeRequest: Int? = nil, selectorDrop: SimulcastDropReason? = nil) {
        self.decision = decision
        self.keyframeRequest = keyframeRequest
        self.selectorDrop = selectorDrop
    }
}
