import Wire

/// Per-subscriber simulcast layer selection for one video track (GitHub
/// issue #5, "Simulcast that never freezes"): decides, packet by packet,
/// which spatial layer (SSRC) and which temporal layers the subscriber
/// receives, and hands the chosen packets to a `StreamRewriter` so the
/// subscriber sees one continuous stream. Models: mediasoup's
/// `SimulcastConsumer`, LiveKit's `videolayerselector` (STYLE item 7).
///
/// Rules:
/// - A spatial switch (up or down, or a start after pause) happens only on
///   a keyframe of the layer switched to; until it arrives the current
///   layer keeps flowing. While waiting, `keyframeRequest` names that
///   layer, at most once per `keyframeRequestInterval` per layer.
/// - The layer wanted is the target's, unless it has been silent for
///   `silenceTimeout`: then the best live layer below it, else the lowest
///   live one above it. So when the forwarded layer goes silent, the
///   forwarder asks at once for a keyframe of a live layer and switches on
///   it; when the target layer comes back, it switches back the same way.
///   A layer never heard counts as heard when the forwarder first saw
///   time (its first call), so a missing layer is given up on after one
///   timeout too.
/// - Temporal layers (VP8 TID) are filtered per picture (all packets of a
///   picture share its RTP timestamp and TID) without keyframes: a lower
///   temporal target applies from the next picture; a higher one is taken
///   one layer at a time, on a picture of the next layer up that has the
///   layer sync bit Y (RFC 7741 section 4.2: it depends only on the base
///   layer, so it decodes although the layer's earlier pictures were
///   dropped), or at once on a keyframe, which resets every reference.
///   Packets without a TID (H264, VP8 without T) are not filtered.
/// - Across a spatial switch, the new layer's timestamps are placed on the
///   old one's timeline from the two SSRCs' latest Sender Reports
///   (`senderReport`), passed to `StreamRewriter.alignNextSource`; without
///   both reports the rewriter's wall-clock fallback applies.
///
/// What the worker calls: `handle` for every packet of every layer of the
/// track (padding included: the rewriter needs them all for contiguous
/// numbering), `senderReport` for every Sender Report of the track's
/// SSRCs, `setTarget` when the allocator's decision changes, and `tick`
/// every 100 ms or so (or at `nextDeadline`), so a silent layer is noticed
/// when no packet at all arrives. Each call may return a layer to send a
/// PLI for.
///
/// Nothing allocates per packet: per-layer state is inline.
package struct SimulcastForwarder: Sendable {
    /// Spatial layers a track may have (simulcast encodings); layers are
    /// `0..<maximumSpatialLayers`.
    package static let maximumSpatialLayers = 3

    package struct Configuration: Equatable, Sendable {
        /// How long a layer may send nothing before it counts as gone.
        package var silenceTimeout: Duration
        /// The least time between two keyframe requests for one layer.
        package var keyframeRequestInterval: Duration
        /// How long the current layer may be quiet before the forwarder
        /// prepares a fallback: it asks for a keyframe of the layer it
        /// would fall back to, and takes that keyframe as soon as it comes
        /// (without waiting for `silenceTimeout`). Half the silence timeout:
        /// four or five frames at 30 fps.
        package var suspectTimeout: Duration

        package init(
            silenceTimeout: Duration = .milliseconds(300), keyframeRequestInterval: Duration = .milliseconds(500),
            suspectTimeout: Duration? = nil
        ) {
            self.silenceTimeout = silenceTimeout
            self.keyframeRequestInterval = keyframeRequestInterval
            self.suspectTimeout = suspectTimeout ?? silenceTimeout / 2
        }
    }

    package let configuration: Configuration
    /// The rewriter that keeps the outgoing stream continuous.
    package private(set) var rewriter: StreamRewriter
    /// What the allocator asked for (clamped into range); nil: paused.
    package private(set) var target: MediaLayer?
    /// Spatial switches completed: each first forwarded packet of a
    /// different spatial layer than before, the first start and every
    /// resume after a pause included.
    package private(set) var switchesCompleted = 0
    /// From the moment the wanted layer last changed (`setTarget`, or a
    /// fallback decided) to the first forwarded packet of that layer.
    package private(set) var lastSwitchLatency: Duration?
    /// Keyframe requests returned to the caller.
    package internal(set) var keyframeRequestsSent = 0
    /// Times the wanted layer became another than the target's because
    /// layers were silent.
    package internal(set) var fallbacks = 0

    /// The spatial layer forwarded now; nil before the first keyframe and
    /// while paused.
    var current: Int?
    /// The highest TID forwarded now.
    var temporalCap = MediaLayer.allTemporalLayers
    /// The spatial layer to be on: the target's, or a fallback.
    var wanted: Int?
    var wantedSince: Instant?
    /// The first instant the forwarder saw: when never-heard layers count
    /// as last heard.
    var startedAt: Instant?
    var lastArrival: InlineArray<3, Instant?> = .init(repeating: nil)
    /// Decisions for the pictures before `picture` (a ring), so a late
    /// packet gets its picture's decision: about half a second at 30 fps.
    static let rememberedPictures = 16
    var recentPictures = InlineArray<16, (timestamp: UInt32, forward: Bool)?>(repeating: nil)
    var nextRememberedPicture = 0
    /// A layer left early for being quiet, and when: not live until it
    /// sends again.
    var abandoned: (layer: Int, at: Instant)?
    var lastKeyframeRequest: InlineArray<3, Instant?> = .init(repeating: nil)
    var senderReports: InlineArray<3, SenderReportClock?> = .init(repeating: nil)
    /// The newest picture of the current layer and whether it is forwarded.
    var picture: (timestamp: UInt32, forward: Bool)?

    package init(
        outgoingSSRC: SSRC, clockRate: UInt32, initialSequenceNumber: UInt16? = nil, initialTimestamp: UInt32? = nil,
        configuration: Configuration = Configuration()
    ) {
        self.configuration = configuration
        rewriter = StreamRewriter(
            outgoingSSRC: outgoingSSRC, clockRate: clockRate, initialSequenceNumber: initialSequenceNumber,
            initialTimestamp: initialTimestamp)
    }

    /// What is forwarded now: the current source's spatial layer and the
    /// temporal filter. Nil while paused or before the first keyframe.
    package var currentLayer: MediaLayer? {
        current.map { MediaLayer(spatial: $0, temporal: temporalCap) }
    }

    /// The spatial layer a switch is waiting for a keyframe of, if any.
    package var pendingSpatialLayer: Int? {
        guard target != nil, let wanted, wanted != current else { return nil }
        return wanted
    }

    /// Sets what the subscriber should receive; nil pauses (nothing is
    /// forwarded; a resume starts again at a keyframe). A change of the
    /// temporal layer alone costs nothing: no keyframe, no request. When
    /// a new spatial layer is wanted, its keyframe request comes with the
    /// next `handle` or `tick`.
    package mutating func setTarget(_ newTarget: MediaLayer?, now: Instant) {
        noteTime(now)
        guard let newTarget else {
            target = nil
            current = nil
            wanted = nil
            wantedSince = nil
            picture = nil
            return
        }
        target = MediaLayer(
            spatial: min(max(newTarget.spatial, 0), Self.maximumSpatialLayers - 1),
            temporal: min(max(newTarget.temporal, 0), MediaLayer.allTemporalLayers))
        reselect(now: now)
    }

    /// Decides what to do with `packet`, which arrived at `arrival`.
    package mutating func handle(_ packet: SimulcastPacket, arrival: Instant) -> SimulcastOutcome {
        noteTime(arrival)
        let layer = packet.spatialLayer
        guard layer >= 0, layer < Self.maximumSpatialLayers else {
            let decision = rewriter.rewrite(packet.source, arrival: arrival, forward: false)
            return SimulcastOutcome(decision: decision, selectorDrop: .spatialLayerOutOfRange)
        }
        if packet.source.payloadLength > 0, lastArrival[layer].map({ arrival > $0 }) ?? true {
            lastArrival[layer] = arrival
        }
        reselect(now: arrival)
        let request = keyframeRequestIfDue(now: arrival)
        var outcome = select(packet, layer: layer, arrival: arrival)
        outcome.keyframeRequest = request
        return outcome
    }

    private mutating func select(_ packet: SimulcastPacket, layer: Int, arrival: Instant) -> SimulcastOutcome {
        guard let target else {
            return drop(packet, arrival: arrival, reason: .paused)
        }
        guard packet.source.payloadLength > 0 else {
            // Padding: the rewriter drops it without taking a number.
            return SimulcastOutcome(decision: rewriter.rewrite(packet.source, arrival: arrival, forward: false))
        }
        if layer == wanted, layer != current, packet.isKeyframe {
            return switchLayer(to: packet, layer: layer, target: target, arrival: arrival)
        }
        // The current layer has gone quiet (not yet silent) and a keyframe
        // of the layer it would fall back to arrives: take it now. Waiting
        // out the silence timeout would cost another keyframe round trip.
        if packet.isKeyframe, let current, layer != current, layer == fallbackCandidate(now: arrival) {
            // The quiet layer counts as gone until it sends again, so the
            // next reselection does not flip straight back to it.
            abandoned = (current, arrival)
            wanted = layer
            fallbacks += 1
            wantedSince = wantedSince ?? arrival
            return switchLayer(to: packet, layer: layer, target: target, arrival: arrival)
        }
        guard layer == current else {
            return drop(packet, arrival: arrival, reason: current == nil ? .waitingForKeyframe : .otherSpatialLayer)
        }
        let forward = temporalFilter(packet, target: target)
        guard forward else { return drop(packet, arrival: arrival, reason: .temporalLayerAbove) }
        return SimulcastOutcome(decision: rewriter.rewrite(packet.source, arrival: arrival, forward: true))
    }

    private mutating func drop(
        _ packet: SimulcastPacket, arrival: Instant, reason: SimulcastDropReason
    ) -> SimulcastOutcome {
        SimulcastOutcome(
            decision: rewriter.rewrite(packet.source, arrival: arrival, forward: false), selectorDrop: reason)
    }

    /// The first packet of a keyframe of the wanted layer: becomes the
    /// current source, placed on the old source's timeline.
    private mutating func switchLayer(
        to packet: SimulcastPacket, layer: Int, target: MediaLayer, arrival: Instant
    ) -> SimulcastOutcome {
        let ssrc = packet.source.ssrc
        if let old = rewriter.currentSource, old != ssrc,
            let from = senderReport(for: ssrc), let to = senderReport(for: old)
        {
            rewriter.alignNextSource(
                ssrc: ssrc, timestampOffset: from.timestampOffset(to: to, clockRate: rewriter.clockRate))
        }
        let decision = rewriter.rewrite(packet.source, arrival: arrival, forward: true)
        guard case .forward = decision else { return SimulcastOutcome(decision: decision) }
        current = layer
        temporalCap = target.temporal
        picture = (packet.source.timestamp, true)
        recentPictures = .init(repeating: nil)
        switchesCompleted += 1
        if let since = wantedSince { lastSwitchLatency = arrival - since }
        wantedSince = nil
        return SimulcastOutcome(decision: decision)
    }

    /// Whether a packet of the current layer passes the temporal filter.
    /// Decided once per picture (RTP timestamp), so pictures are forwarded
    /// or dropped whole.
    private mutating func temporalFilter(_ packet: SimulcastPacket, target: MediaLayer) -> Bool {
        let timestamp = packet.source.timestamp
        let tid = packet.temporalLayer.map { Int($0) }
        if let picture {
            if picture.timestamp == timestamp { return picture.forward }
            if !timestamp.isNewer(than: picture.timestamp) {
                // A late packet (a retransmission, say) of an older
                // picture: the decision taken for that picture, so a
                // picture is never forwarded in part; a picture older than
                // those remembered is judged by the filter as it stands.
                for entry in 0..<Self.rememberedPictures {
                    if let past = recentPictures[entry], past.timestamp == timestamp { return past.forward }
                }
                return tid.map { $0 <= temporalCap } ?? true
            }
        }
        if packet.isKeyframe {
            temporalCap = target.temporal
        } else if target.temporal < temporalCap {
            temporalCap = target.temporal
        }
        var forward = true
        if let tid, tid > temporalCap {
            forward = tid == temporalCap + 1 && tid <= target.temporal && packet.layerSync
            if forward { temporalCap = tid }
        }
        if let previous = picture {
            recentPictures[nextRememberedPicture] = previous
            nextRememberedPicture = (nextRememberedPicture + 1) % Self.rememberedPictures
        }
        picture = (timestamp, forward)
        return forward
    }
}
