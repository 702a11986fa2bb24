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
public struct FreezeDetector: Sendable {
    public let threshold: Duration
    public private(set) var freezeCount = 0
    public private(set) var totalFreezeDuration: Duration = .zero
    public private(set) var longestGap: Duration = .zero
    public private(set) var frames = 0
    private var last: Instant?

    public init(threshold: Duration = .milliseconds(500)) {
        self.threshold = threshold
    }

    /// A frame became available (complete and decodable) at `time`. Times
    /// that go backwards are ignored.
    public mutating func frame(at time: Instant) {
        defer { frames += 1 }
        guard let previous = last else {
            last = time
            return
        }
        guard time >= previous else { return }
        last = time
        let gap = time - previous
        if gap > longestGap { longestGap = gap }
        if gap > threshold {
            freezeCount += 1
            totalFreezeDuration += gap
        }
    }
}
