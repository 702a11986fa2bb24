import Wire

/// Which simulcast layer of a video track the recorder writes: the
/// highest one that is arriving. A recorder is a subscriber with a
/// preference for the top layer and no bandwidth limit (it writes to
/// disk), so it takes every layer the publisher sends and keeps the best.
///
/// A switch happens only on a keyframe of the new layer (RFC 7741 section
/// 4.3: only a keyframe has no reference to earlier frames), as a
/// subscriber's forwarder switches: up as soon as a higher layer's
/// keyframe begins; down when the layer written has been silent for
/// `silence` (the publisher stopped it: dynacast, bandwidth, or a
/// camera change) and a lower layer's keyframe begins. `wantedLayer`
/// tells the shell which layer to ask a keyframe of.
package struct RecordedLayerChoice: Equatable, Sendable {
    package let layerCount: Int
    package let silence: Duration
    /// The layer written now; nil until the first keyframe.
    package private(set) var current: Int?
    private var lastPacket: [Instant?]

    package init(layerCount: Int, silence: Duration = .seconds(1)) {
        self.layerCount = max(1, min(layerCount, 8))
        self.silence = silence
        lastPacket = [Instant?](repeating: nil, count: self.layerCount)
    }

    /// What to do with one packet of `layer`.
    package enum Decision: Equatable, Sendable {
        /// Part of the layer being written.
        case record
        /// Start writing this layer from this packet (the first packet of
        /// its keyframe): the depacketizer starts afresh.
        case switchTo(Int)
        /// Another layer.
        case ignore
    }

    package mutating func packet(layer: Int, startsKeyframe: Bool, now: Instant) -> Decision {
        guard layer >= 0, layer < layerCount else { return .ignore }
        lastPacket[layer] = now
        guard let current else {
            if startsKeyframe {
                self.current = layer
                return .switchTo(layer)
            }
            return .ignore
        }
        if layer == current { return .record }
        guard startsKeyframe else { return .ignore }
        if layer > current || !isArriving(current, now: now) {
            // Down only to a layer that beats the highest arriving one.
            if layer < current, let wanted = wantedLayer(now: now), wanted > layer { return .ignore }
            self.current = layer
            return .switchTo(layer)
        }
        return .ignore
    }

    /// The highest layer that has sent a packet within `silence`: the one
    /// worth a keyframe request when it is not `current`.
    package func wantedLayer(now: Instant) -> Int? {
        (0..<layerCount).reversed().first { isArriving($0, now: now) }
    }

    private func isArriving(_ layer: Int, now: Instant) -> Bool {
        guard let at = lastPacket[layer] else { return false }
        return now - at < silence
    }
}
