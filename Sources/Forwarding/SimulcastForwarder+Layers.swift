import Wire

extension SimulcastForwarder {
    /// Notes a publisher Sender Report of one of the track's layers (RFC
    /// 3550 section 6.4.1): `ntp` is the 64-bit NTP timestamp (32.32),
    /// `rtpTimestamp` the RTP time of the same instant. The latest report
    /// per layer is kept; a switch uses the reports whose SSRCs match the
    /// old and new sources. Reports for layers out of range are ignored.
    package mutating func senderReport(spatialLayer: Int, ssrc: SSRC, ntp: UInt64, rtpTimestamp: UInt32) {
        guard spatialLayer >= 0, spatialLayer < Self.maximumSpatialLayers else { return }
        senderReports[spatialLayer] = SenderReportClock(ssrc: ssrc, ntp: ntp, rtpTimestamp: rtpTimestamp)
    }

    /// Lets the forwarder notice silence when packets stop altogether.
    /// `lastArrival` gives the worker's last arrival per spatial layer
    /// (nil: none); the forwarder also remembers the packets passed to
    /// `handle`, and takes the later of the two. Returns the spatial layer
    /// to send a PLI for now, if any (throttled like `handle`'s). Call
    /// every 100 ms or so, or at `nextDeadline`.
    @discardableResult
    package mutating func tick(now: Instant, lastArrival reported: (Int) -> Instant? = { _ in nil }) -> Int? {
        noteTime(now)
        for layer in 0..<Self.maximumSpatialLayers {
            if let heard = reported(layer), lastArrival[layer].map({ heard > $0 }) ?? true {
                lastArrival[layer] = heard
            }
        }
        reselect(now: now)
        return keyframeRequestIfDue(now: now)
    }

    /// When `tick` next has something to do: the current layer would count
    /// as silent, or the next keyframe request for a pending switch is
    /// due. Nil while paused.
    package var nextDeadline: Instant? {
        guard target != nil else { return nil }
        var deadline: Instant?
        if let current, let heard = lastArrival[current] ?? startedAt {
            let quiet = heard + configuration.suspectTimeout
            deadline = quiet > (startedAt ?? quiet) ? min(quiet, heard + configuration.silenceTimeout) : nil
            if let d = deadline, d <= heard { deadline = heard + configuration.silenceTimeout }
        }
        if let pending = pendingSpatialLayer {
            let due = lastKeyframeRequest[pending].map { $0 + configuration.keyframeRequestInterval } ?? startedAt
            if let due { deadline = deadline.map { min($0, due) } ?? due }
        }
        return deadline
    }

    /// Whether `layer` sent media within `silenceTimeout` before `now`.
    func isLive(_ layer: Int, now: Instant) -> Bool {
        guard let heard = lastArrival[layer] ?? startedAt else { return true }
        if let a = abandoned, a.layer == layer, heard <= a.at { return false }
        return now - heard < configuration.silenceTimeout
    }

    /// The layer to be on for the target spatial layer `t`: `t` if live,
    /// else the best live one below, else the lowest live one above, else
    /// `t` (nothing is live: keep waiting for the target).
    func bestLayer(for t: Int, now: Instant) -> Int {
        if isLive(t, now: now) { return t }
        var below = t - 1
        while below >= 0 {
            if isLive(below, now: now) { return below }
            below -= 1
        }
        var above = t + 1
        while above < Self.maximumSpatialLayers {
            if isLive(above, now: now) { return above }
            above += 1
        }
        return t
    }

    /// Recomputes the wanted layer; a change starts a new switch (its
    /// latency is measured from now).
    mutating func reselect(now: Instant) {
        guard let target else { return }
        let choice = bestLayer(for: target.spatial, now: now)
        guard choice != wanted else { return }
        if choice != target.spatial { fallbacks += 1 }
        wanted = choice
        wantedSince = choice == current ? nil : now
    }

    /// While the current layer is quiet for `suspectTimeout` (but not yet
    /// silent): the live layer it would fall back to, else nil.
    func fallbackCandidate(now: Instant) -> Int? {
        guard let target, let current, current == wanted, let heard = lastArrival[current] ?? startedAt,
            now - heard >= configuration.suspectTimeout
        else { return nil }
        var below = min(target.spatial, current) - 1
        while below >= 0 {
            if isLive(below, now: now) { return below }
            below -= 1
        }
        var above = current + 1
        while above <= target.spatial {
            if isLive(above, now: now) { return above }
            above += 1
        }
        return nil
    }

    /// The layer to request a keyframe of now: the pending switch's, or a
    /// fallback candidate's while the current layer is quiet; once per
    /// `keyframeRequestInterval` per layer.
    mutating func keyframeRequestIfDue(now: Instant) -> Int? {
        guard let layer = pendingSpatialLayer ?? fallbackCandidate(now: now) else { return nil }
        if let last = lastKeyframeRequest[layer], now - last < configuration.keyframeRequestInterval { return nil }
        lastKeyframeRequest[layer] = now
        keyframeRequestsSent += 1
        return layer
    }

    func senderReport(for ssrc: SSRC) -> SenderReportClock? {
        for layer in 0..<Self.maximumSpatialLayers {
            if let report = senderReports[layer], report.ssrc == ssrc { return report }
        }
        return nil
    }

    mutating func noteTime(_ now: Instant) {
        if startedAt == nil { startedAt = now }
    }
}
