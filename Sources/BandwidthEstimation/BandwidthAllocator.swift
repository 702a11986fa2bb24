import Wire

package enum TrackKind: Sendable, Equatable {
    case audio
    case video
}

/// One forwarded track of a subscriber, as the allocator sees it.
package struct AllocatableTrack: Sendable, Equatable {
    /// Opaque to the allocator; returned with the decision.
    package var id: Int
    package var kind: TrackKind
    /// Higher goes first within its kind (speaker, pinned, on-screen size).
    package var priority: Int
    /// The subscriber's cap from its render size or preference; nil = any.
    package var maxSpatialLayer: Int?
    /// Measured bitrate per spatial layer per temporal layer, cumulative
    /// over temporal layers (what forwarding (s, t) costs), as the
    /// publisher sends now. A missing or non-positive entry is a layer not
    /// being sent. Audio: one rate (`LayerRates(single:)`). A fixed-size
    /// value: the allocator runs per subscriber every 200 ms and must not
    /// allocate (issue #14).
    package var layers: LayerRates
    /// What is forwarded now, nil when nothing (new or paused); going above
    /// it needs headroom, staying at or below it does not.
    package var current: MediaLayer?

    package init(
        id: Int, kind: TrackKind, priority: Int = 0, maxSpatialLayer: Int? = nil, layers: LayerRates,
        current: MediaLayer? = nil
    ) {
        self.id = id
        self.kind = kind
        self.priority = priority
        self.maxSpatialLayer = maxSpatialLayer
        self.layers = layers
        self.current = current
    }

    /// The same from nested arrays, `[[rate]]` for audio (tests).
    package init(
        id: Int, kind: TrackKind, priority: Int = 0, maxSpatialLayer: Int? = nil, layers: [[Bitrate]],
        current: MediaLayer? = nil
    ) {
        self.init(
            id: id, kind: kind, priority: priority, maxSpatialLayer: maxSpatialLayer, layers: LayerRates(layers),
            current: current)
    }
}

/// What one track gets.
package enum TrackAllocation: Equatable, Sendable {
    /// Forward this layer; `allocated` is what it costs.
    case forward(MediaLayer, allocated: Bitrate)
    /// The estimate does not reach even the lowest layer: send nothing and
    /// tell the subscriber; it resumes when the estimate allows.
    case paused
    /// The publisher sends no layer this subscriber may receive.
    case unavailable
}

package struct TrackDecision: Equatable, Sendable {
    package var id: Int
    package var allocation: TrackAllocation
    package init(id: Int, allocation: TrackAllocation) {
        self.id = id
        self.allocation = allocation
    }
}

/// The allocator's answer, in the order tracks were given.
package struct BandwidthAllocation: Equatable, Sendable {
    package var decisions: [TrackDecision]
    /// Bitrate beyond the estimate that the next wanted step needs
    /// (headroom included), when some track is held below what it could
    /// get by the estimate alone; nil when nothing is capped. The worker
    /// probes for `estimate + probe` before anything goes up.
    package var probe: Bitrate?
    /// Sum of what was allocated.
    package var allocated: Bitrate

    package subscript(id: Int) -> TrackAllocation? {
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
package struct BandwidthAllocator: Sendable {
    /// 0.1: going up needs 10 % more than the layer's rate.
    package var upgradeHeadroom: Double

    package init(upgradeHeadroom: Double = 0.1) {
        self.upgradeHeadroom = upgradeHeadroom
    }

    /// 2^53 bit/s: any real rate, and exactly representable as Double.
    static let largestRate: Int64 = 1 << 53

    fileprivate struct Step {
        var layer: MediaLayer
        var cost: Int64
    }

    /// A video's available layers in ladder order, inline (at most
    /// `LayerRates`' 3 x 4).
    fileprivate struct Ladder {
        private var steps = InlineArray<12, Step>(repeating: Step(layer: MediaLayer(spatial: 0, temporal: 0), cost: 0))
        private(set) var count = 0
        subscript(i: Int) -> Step { steps[i] }
        mutating func append(_ step: Step) {
            guard count < 12 else { return }
            steps[count] = step
            count += 1
        }
    }

    fileprivate struct VideoState {
        var index: Int
        var ladder: Ladder
        /// Position on the ladder; -1 = nothing (paused).
        var position: Int
        var done: Bool
    }

    /// What one allocation writes, kept between calls so that the server's
    /// rounds (every subscriber, every 200 ms) allocate nothing once its
    /// arrays have grown to the largest subscriber's track count.
    package struct Workspace {
        /// In the order tracks were given.
        package fileprivate(set) var decisions: [TrackDecision] = []
        /// As `BandwidthAllocation.probe`.
        package fileprivate(set) var probe: Bitrate?
        package fileprivate(set) var allocated = Bitrate(bitsPerSecond: 0)
        fileprivate var order: [Int] = []
        fileprivate var videos: [VideoState] = []
        package init() {}
    }

    /// The allocation as a value (tests, callers that keep it).
    package func allocate(estimate: Bitrate, tracks: [AllocatableTrack]) -> BandwidthAllocation {
        var workspace = Workspace()
        allocate(estimate: estimate, tracks: tracks, into: &workspace)
        return BandwidthAllocation(
            decisions: workspace.decisions, probe: workspace.probe, allocated: workspace.allocated)
    }

    /// The allocation into `w`, reusing its storage.
    package func allocate(estimate: Bitrate, tracks: [AllocatableTrack], into w: inout Workspace) {
        // Rates are bounded far below Int64's range, so sums cannot overflow.
        var remaining = min(max(estimate.bitsPerSecond, 0), Self.largestRate)
        w.decisions.removeAll(keepingCapacity: true)
        for t in tracks { w.decisions.append(TrackDecision(id: t.id, allocation: .unavailable)) }

        // 1. Audio.
        Self.serviceOrder(tracks, kind: .audio, into: &w.order)
        for i in w.order {
            let cost = tracks[i].layers[0, 0].map { min(max($0.bitsPerSecond, 0), Self.largestRate) } ?? 0
            if cost <= remaining {
                remaining -= cost
                w.decisions[i].allocation = .forward(
                    MediaLayer(spatial: 0, temporal: 0), allocated: Bitrate(bitsPerSecond: cost))
            } else {
                w.decisions[i].allocation = .paused
            }
        }

        // 2. Lowest layer of every video.
        w.videos.removeAll(keepingCapacity: true)
        Self.serviceOrder(tracks, kind: .video, into: &w.order)
        for i in w.order {
            let ladder = Self.ladder(tracks[i])
            guard ladder.count > 0 else { continue }
            let lowest = ladder[0]
            var state = VideoState(index: i, ladder: ladder, position: -1, done: false)
            if required(lowest, from: nil, track: tracks[i]) <= remaining {
                remaining -= lowest.cost
                state.position = 0
            } else {
                state.done = true
            }
            w.videos.append(state)
        }

        // 3. One step at a time, round after round.
        var progressed = true
        while progressed {
            progressed = false
            for v in w.videos.indices where !w.videos[v].done {
                let state = w.videos[v]
                let next = state.position + 1
                guard next < state.ladder.count else {
                    w.videos[v].done = true
                    continue
                }
                let from = state.ladder[state.position]
                let step = state.ladder[next]
                let need = required(step, from: from, track: tracks[state.index])
                if need <= remaining {
                    remaining -= step.cost - from.cost
                    w.videos[v].position = next
                    progressed = true
                } else {
                    w.videos[v].done = true
                }
            }
        }

        // Probe for the next step of the first capped video in service
        // order, paused ones first: lowest layers before higher ones.
        w.probe = nil
        search: for pass in 0..<2 {
            for v in w.videos.indices where (w.videos[v].position < 0) == (pass == 0) {
                let state = w.videos[v]
                guard state.position + 1 < state.ladder.count else { continue }
                let from = state.position >= 0 ? state.ladder[state.position] : nil
                let need = required(state.ladder[state.position + 1], from: from, track: tracks[state.index])
                w.probe = Bitrate(bitsPerSecond: max(need - remaining, 1))
                break search
            }
        }

        var allocated: Int64 = 0
        for v in w.videos.indices {
            let state = w.videos[v]
            if state.position >= 0 {
                let step = state.ladder[state.position]
                w.decisions[state.index].allocation = .forward(step.layer, allocated: Bitrate(bitsPerSecond: step.cost))
            } else {
                w.decisions[state.index].allocation = .paused
            }
        }
        for decision in w.decisions {
            if case .forward(_, let rate) = decision.allocation { allocated &+= rate.bitsPerSecond }
        }
        w.allocated = Bitrate(bitsPerSecond: allocated)
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
    private static func ladder(_ track: AllocatableTrack) -> Ladder {
        var steps = Ladder()
        for s in 0..<track.layers.spatialCount {
            if let cap = track.maxSpatialLayer, s > cap { break }
            for t in 0..<track.layers.temporalCount(spatial: s) {
                guard let rate = track.layers[s, t], rate.bitsPerSecond > 0 else { continue }
                steps.append(Step(layer: MediaLayer(spatial: s, temporal: t), cost: min(rate.bitsPerSecond, largestRate)))
            }
        }
        return steps
    }

    /// Indices of `kind` tracks by priority, then larger cap, then input
    /// order, into `order` (an insertion sort in place: a subscriber has
    /// tens of tracks, and `sorted` would allocate).
    private static func serviceOrder(_ tracks: [AllocatableTrack], kind: TrackKind, into order: inout [Int]) {
        order.removeAll(keepingCapacity: true)
        func before(_ a: Int, _ b: Int) -> Bool {
            let x = tracks[a]
            let y = tracks[b]
            if x.priority != y.priority { return x.priority > y.priority }
            let xCap = x.maxSpatialLayer ?? .max
            let yCap = y.maxSpatialLayer ?? .max
            if xCap != yCap { return xCap > yCap }
            return a < b
        }
        for i in tracks.indices where tracks[i].kind == kind {
            order.append(i)
            var j = order.count - 1
            while j > 0, before(order[j], order[j - 1]) {
                order.swapAt(j, j - 1)
                j -= 1
            }
        }
    }
}
