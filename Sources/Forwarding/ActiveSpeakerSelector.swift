import Wire

/// Picks a room's active speakers from its audio tracks' activity, and
/// decides when the room hears about it: only when the list (who, in what
/// order) changes, and at most once per `minimumInterval` (about three
/// times a second). Activity is smoothed over windows so a speaker does
/// not flicker out between words.
package struct ActiveSpeakerSelector<Key: Hashable & Sendable>: Sendable {
    package struct Configuration: Sendable {
        /// At most one announcement per interval.
        package var minimumInterval: Duration = .milliseconds(333)
        /// Smoothed share of speech packets to count as speaking.
        package var speakingFraction = 0.3
        /// Weight of the newest window in the smoothing (0...1).
        package var smoothing = 0.5
        package init() {}
    }

    package let configuration: Configuration
    private var smoothed: [Key: AudioActivity] = [:]
    private var announced: [Key] = []
    private var lastAnnouncement: Instant?

    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The speakers last announced, loudest first.
    package var current: [Key] { announced }

    /// Feeds one window of every audio track of the room (a key missing
    /// from `activities` has left: it stops speaking). Returns the new
    /// speaker list, loudest first, with smoothed levels, when it should be
    /// announced now; nil otherwise.
    package mutating func update(
        _ activities: [(key: Key, activity: AudioActivity)], now: Instant
    ) -> [(
        key: Key, level: Double
    )]? {
        let w = configuration.smoothing
        var next: [Key: AudioActivity] = [:]
        for (key, a) in activities {
            let old = smoothed[key] ?? AudioActivity(speechFraction: 0, level: 0)
            next[key] = AudioActivity(
                speechFraction: old.speechFraction * (1 - w) + a.speechFraction * w, level: old.level * (1 - w) + a.level * w)
        }
        smoothed = next
        let speaking =
            smoothed
            .filter { $0.value.speechFraction >= configuration.speakingFraction }
            .map { (key: $0.key, level: $0.value.level) }
            .sorted { $0.level > $1.level }
        let keys = speaking.map(\.key)
        guard keys != announced else { return nil }
        if let last = lastAnnouncement, now - last < configuration.minimumInterval { return nil }
        announced = keys
        lastAnnouncement = now
        return speaking
    }
}
