import Forwarding
import RoomProtocol
import Wire

/// Picks a room's active speakers from its audio tracks' activity, and
/// decides when the room hears about it: only when the list (who, in what
/// order) changes, and at most once per `minimumInterval` (about three
/// times a second). Activity is smoothed over windows so a speaker does
/// not flicker out between words.
///
/// A window is fed with `beginWindow`, `record` per audio track and
/// `endWindow`. Every list lives in storage kept between windows, so a
/// window in steady state allocates nothing (issue #14); only an
/// announcement builds its result.
struct ActiveSpeakerSelector {
    struct Configuration: Sendable {
        /// At most one announcement per interval.
        var minimumInterval: Duration = .milliseconds(333)
        /// Smoothed share of speech packets to count as speaking.
        var speakingFraction = 0.3
        /// Weight of the newest window in the smoothing (0...1).
        var smoothing = 0.5
        init() {}
    }

    private struct Entry {
        var participant: ParticipantID
        var activity: AudioActivity
    }

    let configuration: Configuration
    /// This window's activity, one entry per participant (its loudest track).
    private var window: [Entry] = []
    /// The smoothed activity of the participants of the last window.
    private var smoothed: [Entry] = []
    private var scratch: [Entry] = []
    /// Speaking participants of the last window, loudest first.
    private var speaking: [Entry] = []
    private var announced: [ParticipantID] = []
    private var lastAnnouncement: Instant?

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The speakers last announced, loudest first.
    var current: [ParticipantID] { announced }

    mutating func beginWindow() { window.removeAll(keepingCapacity: true) }

    /// One audio track's activity over the window; a participant with
    /// several audio tracks counts by its loudest.
    mutating func record(_ participant: ParticipantID, _ a: AudioActivity) {
        if let i = window.firstIndex(where: { $0.participant == participant }) {
            let old = window[i].activity
            if old.level < a.level || old.speechFraction < a.speechFraction { window[i].activity = a }
        } else {
            window.append(Entry(participant: participant, activity: a))
        }
    }

    /// Whether this window had any audio track.
    var windowIsEmpty: Bool { window.isEmpty }

    /// Ends the window (a participant missing from it has left: it stops
    /// speaking). Returns the new speaker list, loudest first, with
    /// smoothed levels, when it should be announced now; nil otherwise.
    mutating func endWindow(now: Instant) -> [(participant: ParticipantID, level: Double)]? {
        let w = configuration.smoothing
        scratch.removeAll(keepingCapacity: true)
        for e in window {
            let old = smoothed.first { $0.participant == e.participant }?.activity ?? AudioActivity(speechFraction: 0, level: 0)
            scratch.append(
                Entry(
                    participant: e.participant,
                    activity: AudioActivity(
                        speechFraction: old.speechFraction * (1 - w) + e.activity.speechFraction * w,
                        level: old.level * (1 - w) + e.activity.level * w)))
        }
        swap(&smoothed, &scratch)
        speaking.removeAll(keepingCapacity: true)
        for e in smoothed where e.activity.speechFraction >= configuration.speakingFraction {
            // Insertion in place, loudest first; equal levels keep window
            // order. A room has at most a few hundred participants.
            var i = speaking.count
            speaking.append(e)
            while i > 0, speaking[i - 1].activity.level < e.activity.level {
                speaking.swapAt(i - 1, i)
                i -= 1
            }
        }
        guard !speaking.elementsEqual(announced, by: { $0.participant == $1 }) else { return nil }
        if let last = lastAnnouncement, now - last < configuration.minimumInterval { return nil }
        announced.removeAll(keepingCapacity: true)
        for e in speaking { announced.append(e.participant) }
        lastAnnouncement = now
        return speaking.map { ($0.participant, $0.activity.level) }
    }

    /// One whole window (tests): `beginWindow`, `record` each, `endWindow`.
    mutating func update(
        _ activities: [(participant: ParticipantID, activity: AudioActivity)], now: Instant
    ) -> [(participant: ParticipantID, level: Double)]? {
        beginWindow()
        for (p, a) in activities { record(p, a) }
        return endWindow(now: now)
    }
}

/// A room's speaker selection on this worker, held by reference so a round
/// updates it in place (a struct in a dictionary would be copied out and
/// back, its arrays with it).
final class RoomSpeakers {
    var selector = ActiveSpeakerSelector()
}
