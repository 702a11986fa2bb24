import RoomProtocol

/// What a room is made with: by the server API (`createRoom`), or by the
/// first join (mode only, no limit of its own, closed as soon as it is
/// empty). Every field is bounded (`RoomOptions.problem`) before a room
/// takes it.
package struct RoomOptions: Equatable, Sendable {
    package var mode: RoomMode
    /// Members at most; nil: the server's `RoomLimits.participantsPerRoom`
    /// (a room's own limit never exceeds it).
    package var maxParticipants: Int?
    /// How long the room stays once empty (and, made by the API, before
    /// anyone joins). Zero: it closes when its last member leaves.
    package var emptyTimeout: Duration
    /// Free text for the application (JSON, say); at most
    /// `maxMetadataBytes`.
    package var metadata: String

    package init(mode: RoomMode = .sfu, maxParticipants: Int? = nil, emptyTimeout: Duration = .zero, metadata: String = "") {
        self.mode = mode
        self.maxParticipants = maxParticipants
        self.emptyTimeout = emptyTimeout
        self.metadata = metadata
    }

    /// Room and participant metadata, in UTF-8 bytes.
    package static let maxMetadataBytes = 4096
    /// The longest empty timeout: a day.
    package static let maxEmptyTimeout = Duration.seconds(86_400)
    /// An empty room made by the API waits this long for its first member
    /// unless told otherwise (LiveKit's default, five minutes).
    package static let defaultAPIEmptyTimeout = Duration.seconds(300)

    /// Why these options are refused, or nil.
    package func problem(limits: RoomLimits) -> String? {
        if let maxParticipants, !(1...limits.participantsPerRoom).contains(maxParticipants) {
            return "maxParticipants must be 1 to \(limits.participantsPerRoom) (the server's limit)"
        }
        if emptyTimeout < .zero || emptyTimeout > Self.maxEmptyTimeout {
            return "emptyTimeout must be 0 to \(Self.maxEmptyTimeout.components.seconds) seconds"
        }
        if metadata.utf8.count > Self.maxMetadataBytes { return "metadata is over \(Self.maxMetadataBytes) bytes" }
        return nil
    }
}

/// What happened to a room, for the server's webhooks (docs/API.md). The
/// directory records them as they happen (`RoomDirectory.takeEvents`);
/// the shell drains them after each input. Call rooms and participants
/// another node serves are not reported here (their node reports them).
package enum RoomEvent: Equatable, Sendable {
    case roomStarted(room: String)
    case roomFinished(room: String)
    case participantJoined(room: String, participant: ParticipantInfo)
    case participantLeft(room: String, participant: ParticipantInfo, reason: String)
    case trackPublished(room: String, participant: ParticipantInfo, track: TrackInfo)
    case trackUnpublished(room: String, participant: ParticipantInfo, trackID: String)

    package var room: String {
        switch self {
        case .roomStarted(let room), .roomFinished(let room), .participantJoined(let room, _),
            .participantLeft(let room, _, _), .trackPublished(let room, _, _), .trackUnpublished(let room, _, _):
            room
        }
    }

    /// Events held between two drains at most; past it the newest are
    /// dropped and counted (`RoomDirectory.droppedEvents`). A shell drains
    /// after every input, so only a directory nobody drains reaches it.
    package static let pendingLimit = 4096
}

/// A room as the server API shows it.
package struct RoomSummary: Equatable, Sendable {
    package var name: String
    package var options: RoomOptions
    package var participants: Int
    package var tracks: Int
}

/// A participant as the server API shows it.
package struct ParticipantSummary: Equatable, Sendable {
    package var info: ParticipantInfo
    /// `websocket`, `whip`, `whep` or `remote`.
    package var kind: String
    package var connected: Bool
    package var grants: Grants
}
