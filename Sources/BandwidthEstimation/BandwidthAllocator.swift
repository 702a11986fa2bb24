import Wire

/// A forwarding layer: simulcast stream (spatial) and temporal layer.
/// Audio is always (0, 0).
public struct AllocatedLayer: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var spatial: Int
    public var temporal: Int
    public init(spatial: Int, temporal: Int) {
        self.spatial = spatial
        self.temporal = temporal
    }
    public static func < (a: AllocatedLayer, b: AllocatedLayer) -> Bool {
        (a.spatial, a.temporal) < (b.spatial, b.temporal)
    }
    public var description: String { "S\(spatial)T\(temporal)" }
}

public enum TrackKind: Sendable, Equatable {
    case audio
    case video
}

/// One forwarded track of a subscriber, as the allocator sees it.
public struct AllocatableTrack: Sendable, Equatable {
    /// Opaque to the allocator; returned with the decision.
    public var id: Int
    public var kind: TrackKind
    /// Higher goes first within its kind (speaker, pinned, on-screen size).
    public var priority: Int
    /// The subscriber's cap from its render size or preference; nil = any.
    public var maxSpatialLayer: Int?
    /// Measured bitrate per spatial layer per temporal layer, cumulative
    /// over temporal layers (what forwarding (s, t) costs), as the
    /// publisher sends now. A missing or non-positive entry is a layer not
    /// being sent. Audio: `[[rate]]`.
    public var layers: [[Bitrate]]
    /// What is forwarded now, nil when nothing (new or paused); going above
    /// it needs headroom, staying at or below it does not.
    public var current: AllocatedLayer?

    public init(
        id: Int, kind: TrackKind, priority: Int = 0, maxSpatialLayer: Int? = nil, layers: [[Bitrate]],
        current: AllocatedLayer? = nil
    ) {
        self.id = id
        self.kind = kind
        self.priority = priority
        self.maxSpatialLayer = maxSpatialLayer
        self.layers = layers
        self.current = current
    }
}

/// What one track gets.
public enum TrackAllocation: Equatable, Sendable {
    /// Forward this layer; `allocated` is what it costs.
    case forward(AllocatedLayer, allocated: Bitrate)
    /// The estimate does not reach even the lowest layer: send nothing and
    /// tell the subscriber; it resumes when the estimate allows.
    case paused
    /// The publisher sends no layer this subscriber may receive.
    case unavailable
}

public struct TrackDecision: Equatable, Sendable {
    public var id: Int
    public var allocation: TrackAllocation
    public init(id: Int, allocation: TrackAllocation) {
        self.id = id
        self.allocation = allocation
    }
}

/// The allocator's answer, in the order tracks were given.
public struct BandwidthAllocation: Equatable, Sendable {
    public var decisions: [TrackDecision]
    /// Bitrate beyond the estimate that the next wanted step needs
    /// (headroom included), when some track is held below what it could
    /// get by the estimate alone; nil when nothing is capped. The worker
    /// probes for `estimate + probe` before anything goes up.
    public var probe: Bitrate?
    /// Sum of what was allocated.
    public var allocated: Bitrate

    public subscript(id: Int) -> TrackAllocation? {
        decisions.first { $0.id == id }?.allocation
    }
}

/// Shares one subscriber's estimate over its tracks: a pure function of
/// the estimate and the tracks, so the worker calls it whenever either
/// changes (at most every few hundred milliseconds) and performs the
/// difference.
///
/// Order of service:
/// 1. audio, by priority: each gets its rate while the estimate lasts
///    (audio that does not fit is paused, only when the estimate cannot
///    carry it);
/// 2. every video its lowest available layer, by priority, then by larger
///    `maxSpatialLayer` (on-screen size; nil counts as largest), then input
///    order; a video whose lowest layer does not fit is paused;
/// 3. rounds of one step up per video in the same order until no step
///    fits. A video's steps are its available layers in (spatial, temporal)
///    order up to `maxSpatialLayer`: temporal layers within a spatial layer
///    first, then the next spatial layer. Going down walks the same ladder
///    backwards, so temporal layers go before spatial ones.
///
/// Hysteresis, stateless through `current`: a layer at or below what is
/// forwarded now needs only its cost; a layer above it (or any layer for a
/// paused video) needs its cost plus `upgradeHeadroom` of it. An estimate
/// jittering less than that around a boundary leaves the choice alone.
public struct BandwidthAllocator: Sendable {
    /// 0.1: going up needs 10 % more than the layer's rate.
    public var upgradeHeadroom: Double

    public init(upgradeHeadroom: Double = 0.1) {
        self.upgradeHeadroom = upgradeHeadroom
    }

    /// 2^53 bit/s: any real rate, and exactly representable as Double.
    static let largestRate: Int64 = 1 << 53

    private struct Step {
        var layer: AllocatedLayer
        var cost: Int64
    }

    private struct VideoState {
        var index: Int
        var ladder: [Step]
        /// Position on the ladder; -1 = nothing (paused).
        var position: Int
        var done: Bool
    }

    public func allocate(estimate: Bitrate, tracks: [AllocatableTrack]) -> BandwidthAllocation {
        // Rates are bounded far below Int64's range, so sums cannot overflow.
        var remaining = min(max(estimate.bitsPerSecond, 0), Self.largestRate)
        var decisions = tracks.map { TrackDecision(id: $0.id, allocation: .unavailable) }

        // 1. Audio.
        for i in Self.serviceOrder(tracks, kind: .audio) {
            let cost = tracks[i].layers.first?.first.map { min(max($0.bitsPerSecond, 0), Self.largestRate) } ?? 0
            if cost <= remaining {
                remaining -= cost
                decisions[i].allocation = .forward(
                    AllocatedLayer(spatial: 0, temporal: 0), allocated: Bitrate(bitsPerSecond: cost))
            } else {
                decisions[i].allocation = .paused
            }
        }

        // 2. Lowest layer of every video.
        var videos: [VideoState] = []
        for i in Self.serviceOrder(tracks, kind: .video) {
            let ladder = Self.ladder(tracks[i])
            guard let lowest = ladder.first else { continue }
            var state = VideoState(index: i, ladder: ladder, position: -1, done: false)
            if required(lowest, from: nil, track: tracks[i]) <= remaining {
                remaining -= lowest.cost
                state.position = 0
            } else {
                state.done = true
            }
            videos.append(state)
        }

        // 3. One step at a time, round after round.
        var progressed = true
        while progressed {
            progressed = false
            for v in videos.indices where !videos[v].done {
                let state = videos[v]
                let next = state.position + 1
                guard next < state.ladder.count else {
                    videos[v].done = true
                    continue
                }
                let from = state.ladder[state.position]
                let step = state.ladder[next]
                let need = required(step, from: from, track: tracks[state.index])
                if need <= remaining {
                    remaining -= step.cost - from.cost
                    videos[v].position = next
                    progressed = true
                } else {
                    videos[v].done = true
                }
            }
        }

        // Probe for the next step of the first capped video in service
        // order, paused ones first: lowest layers before higher ones.
        var probe: Bitrate?
        let capped = videos.filter { $0.position < 0 } + videos.filter { $0.position >= 0 }
        for state in capped where state.position + 1 < state.ladder.count {
            let from = state.position >= 0 ? state.ladder[state.position] : nil
            let need = required(state.ladder[state.position + 1], from: from, track: tracks[state.index])
            probe = Bitrate(bitsPerSecond: max(need - remaining, 1))
            break
        }

        var allocated: Int64 = 0
        for state in videos {
            if state.position >= 0 {
                let step = state.ladder[state.position]
                decisions[state.index].allocation = .forward(step.layer, allocated: Bitrate(bitsPerSecond: step.cost))
            } else {
                decisions[state.index].allocation = .paused
            }
        }
        for decision in decisions {
            if case .forward(_, let rate) = decision.allocation { allocated &+= rate.bitsPerSecond }
        }
        return BandwidthAllocation(decisions: decisions, probe: probe, allocated: Bitrate(bitsPerSecond: allocated))
    }

    /// What moving from `from` (nil: nothing) to `step` takes out of the
    /// remaining budget, headroom included when `step` is above `current`.
    private func required(_ step: Step, from: Step?, track: AllocatableTrack) -> Int64 {
        let delta = step.cost - (from?.cost ?? 0)
        guard track.current.map({ step.layer > $0 }) ?? true else { return delta }
        let headroom = Double(step.cost) * max(upgradeHeadroom, 0)
        return delta &+ (Int64(exactly: headroom.rounded(.up)) ?? 0)
    }

    /// Available layers of a video in ladder order, up to its cap.
    private static func ladder(_ track: AllocatableTrack) -> [Step] {
        var steps: [Step] = []
        for (s, temporal) in track.layers.enumerated() {
            if let cap = track.maxSpatialLayer, s > cap { break }
            for (t, rate) in temporal.enumerated() where rate.bitsPerSecond > 0 {
                steps.append(Step(layer: AllocatedLayer(spatial: s, temporal: t), cost: min(rate.bitsPerSecond, largestRate)))
            }
        }
        return steps
    }

    /// Indices of `kind` tracks by priority, then larger cap, then input order.
    private static func serviceOrder(_ tracks: [AllocatableTrack], kind: TrackKind) -> [Int] {
        tracks.indices.filter { tracks[$0].kind == kind }.sorted { a, b in
            let x = tracks[a]
            let y = tracks[b]
            if x.priority != y.priority { return x.priority > y.priority }
            let xCap = x.maxSpatialLayer ?? .max
            let yCap = y.maxSpatialLayer ?? .max
            if xCap != yCap { return xCap > yCap }
            return a < b
        }
    }
}
