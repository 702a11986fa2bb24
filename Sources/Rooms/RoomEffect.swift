import Wire

/// The verified content of a `join`: the signalling shell checked the
/// token's signature, expiry and room before the rooms layer sees it.
public struct JoinRequest: Equatable, Sendable {
    public var identity: String
    public var room: String
    public var grants: Grants
    /// The mode to create the room in, if it does not exist yet.
    public var mode: RoomMode?
    public init(identity: String, room: String, grants: Grants, mode: RoomMode? = nil) {
        self.identity = identity
        self.room = room
        self.grants = grants
        self.mode = mode
    }
}

/// What the rooms layer decides; the shell carries it out. Tests assert
/// on these values (STYLE.md item 3).
public enum RoomEffect: Equatable, Sendable {
    /// Send a message on a connection.
    case send(ConnectionID, ServerMessage)
    /// Close a connection (replaced by a newer one of the same identity).
    case close(ConnectionID)
    /// Work for the media layer of the room's worker.
    case media(MediaCommand)
}

/// What the media layer must do for SFU rooms. The rooms layer decides
/// who forwards what to whom; the worker owning the room executes it.
public enum MediaCommand: Equatable, Sendable {
    /// The participant is gone: close its transports and stop every
    /// forwarding to or from it.
    case releaseParticipant(room: String, participant: ParticipantID)
}
