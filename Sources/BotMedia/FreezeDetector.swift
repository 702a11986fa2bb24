import Wire

/// Counts video freezes from the times frames become available: a gap
/// between consecutive frames longer than `threshold` is one freeze, and
/// the whole gap counts toward the total frozen time.
///
/// The W3C stats definition (`freezeCount`, webrtc-stats) uses a threshold
/// that adapts to the frame rate: max(3 x average frame duration, average
/// + 150 ms). Bots send 30 fps with at most 4 frames per base-layer
/// period, so a fixed 500 ms is comfortably above any normal gap even when
/// the SFU forwards only the base layer (7.5 fps, 133 ms), and it keeps
/// the measure comparable across layers. Allocates nothing.
///
/// A freeze that is still going on has no closing frame: `measured(until:)`
/// counts it as ending at a given instant (the end of the run, or now), so
/// a track that stops for good is a freeze too, not a silent one.
package struct FreezeDetector: Sendable {
    package let threshold: Duration
    package private(set) var freezeCount = 0
    package private(set) var totalFreezeDuration: Duration = .zero
    package private(set) var longestGap: Duration = .zero
    package private(set) var frames = 0
    /// When the last frame came; nil before the first.
    package private(set) var last: Instant?

    package init(threshold: Duration = .milliseconds(500)) {
        self.threshold = threshold
    }

    /// A frame became available (complete and decodable) at `time`. Times
    /// that go backwards are ignored.
    package mutating func frame(at time: Instant) {
        defer { frames += 1 }
        guard let previous = last else {
            last = time
            return
        }
        guard time >= previous else { return }
        last = time
        account(time - previous)
    }

    /// The figures with the gap since the last frame closed at `end`, as
    /// if a frame came then (not counted as a frame): the freeze in
    /// progress, if any, is counted with the time it has lasted so far.
    /// Unchanged before the first frame or for an `end` before the last.
    package func measured(until end: Instant) -> FreezeDetector {
        guard let previous = last, end > previous else { return self }
        var copy = self
        copy.account(end - previous)
        return copy
    }

    /// The gap since the last frame at `now`; nil before the first frame.
    package func currentGap(at now: Instant) -> Duration? {
        guard let previous = last else { return nil }
        return now > previous ? now - previous : .zero
    }

    private mutating func account(_ gap: Duration) {
        if gap > longestGap { longestGap = gap }
        if gap > threshold {
            freezeCount += 1
            totalFreezeDuration += gap
        }
    }
}
