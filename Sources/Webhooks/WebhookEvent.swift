import FoundationEssentials
import RoomProtocol
import Rooms

/// One webhook notification as its receiver reads it (docs/API.md): a
/// JSON object with a unique `id`, the `event` type, `createdAt` (Unix
/// seconds, with milliseconds), the `room`, and the event's own fields.
/// Built from a `RoomEvent` by the shell, which supplies the id and the
/// wall-clock time (this target reads neither a clock nor randomness).
package struct WebhookEvent: Equatable, Sendable, Encodable {
    package var id: String
    package var event: String
    package var createdAt: Double
    package var room: String
    package var participant: ParticipantInfo?
    package var track: TrackInfo?
    package var trackId: String?
    package var reason: String?
    package var recording: RecordingInfo?

    /// What `recording_finished` carries; the recorder fills it
    /// (`WebhookEvent.recordingFinished`).
    package struct RecordingInfo: Equatable, Sendable, Encodable {
        package var id: String
        /// Files written, as paths on the server.
        package var files: [String]
        package var durationSeconds: Double
        /// Why it ended: `stopped`, `room_finished`, `disk_full`,
        /// `max_duration`, `error: ...`.
        package var status: String
        package init(id: String, files: [String], durationSeconds: Double, status: String) {
            self.id = id
            self.files = files
            self.durationSeconds = durationSeconds
            self.status = status
        }
    }

    /// The event types, as the `event` field spells them.
    package enum Kind: String, CaseIterable, Sendable {
        case roomStarted = "room_started"
        case roomFinished = "room_finished"
        case participantJoined = "participant_joined"
        case participantLeft = "participant_left"
        case trackPublished = "track_published"
        case trackUnpublished = "track_unpublished"
        case recordingFinished = "recording_finished"
    }

    package init(_ event: RoomEvent, id: String, createdAt: Double) {
        self.id = id
        self.createdAt = createdAt
        room = event.room
        switch event {
        case .roomStarted: self.event = Kind.roomStarted.rawValue
        case .roomFinished: self.event = Kind.roomFinished.rawValue
        case .participantJoined(_, let p):
            self.event = Kind.participantJoined.rawValue
            participant = p
        case .participantLeft(_, let p, let why):
            self.event = Kind.participantLeft.rawValue
            participant = p
            reason = why
        case .trackPublished(_, let p, let t):
            self.event = Kind.trackPublished.rawValue
            participant = p
            track = t
        case .trackUnpublished(_, let p, let t):
            self.event = Kind.trackUnpublished.rawValue
            participant = p
            trackId = t
        }
    }

    /// `recording_finished`, for the recorder to hand to
    /// `WebhookNotifier.notify`.
    package static func recordingFinished(
        room: String, recording: RecordingInfo, id: String, createdAt: Double
    ) -> WebhookEvent {
        var event = WebhookEvent(.roomStarted(room: room), id: id, createdAt: createdAt)
        event.event = Kind.recordingFinished.rawValue
        event.recording = recording
        return event
    }

    /// The request body: compact JSON, sorted keys, absent fields left out.
    package func jsonBytes() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, numbers, booleans and arrays of them always encode.
        return (try? Array(encoder.encode(self))) ?? []
    }
}
