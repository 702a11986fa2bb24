/// Error codes of the room protocol (docs/PROTOCOL.md). Stable strings:
/// clients switch on them.
package enum ErrorCode: String, Sendable, Codable, Equatable {
    /// The message was not valid JSON or not a known message.
    case badRequest = "bad_request"
    /// A message that needs a joined participant came before `join`.
    case notJoined = "not_joined"
    /// `join` on a connection that already joined.
    case alreadyJoined = "already_joined"
    /// The token is missing a grant this message needs.
    case forbidden = "forbidden"
    /// The room exists in the other mode.
    case modeMismatch = "mode_mismatch"
    /// The mesh room is full.
    case roomFull = "room_full"
    /// No such participant (call target, mesh peer) in reach.
    case unknownParticipant = "unknown_participant"
    /// No such call, or not one of yours.
    case unknownCall = "unknown_call"
    /// `call` to your own participant id.
    case cannotCallSelf = "cannot_call_self"
    /// The callee is already in a call.
    case busy = "busy"
    /// No such track.
    case unknownTrack = "unknown_track"
    /// The server is draining and takes no new joins.
    case draining = "draining"
    /// The media layer refused the request (malformed SDP, unsupported codecs).
    case negotiationFailed = "negotiation_failed"
    /// The message is not valid in this room's mode (e.g. media in a mesh room).
    case wrongMode = "wrong_mode"
    /// The identity is already present in the room through another kind
    /// of session (a WebSocket participant and a WHIP/WHEP session, or two
    /// HTTP sessions): one participant per identity per room.
    case identityInUse = "identity_in_use"
    /// WHEP: the participant to play has published nothing (yet).
    case nothingPublished = "nothing_published"
    /// An SDP larger than the server's limit (`RoomLimits.sdpBytes`).
    case tooLarge = "too_large"
    /// An offer with more m-sections than `RoomLimits.sectionsPerOffer`, or
    /// more sending tracks than `RoomLimits.tracksPerParticipant`.
    case tooManyTracks = "too_many_tracks"
    /// Receiving one more track would pass
    /// `RoomLimits.subscriptionsPerParticipant`.
    case tooManySubscriptions = "too_many_subscriptions"
    /// The server holds `RoomLimits.rooms` rooms: no new room (retry later
    /// or elsewhere).
    case serverFull = "server_full"
    /// In a cluster: the room cannot be placed now (Redis unreachable, no
    /// node takes rooms), or the room moved and the client should
    /// reconnect. The message says which (docs/CLUSTER.md).
    case unavailable = "unavailable"
    /// Data channel messages faster than the server relays them
    /// (docs/PROTOCOL.md "Data channels"): this one was dropped.
    case rateLimited = "rate_limited"
    /// The server API removed this participant from its room (or closed
    /// the room); the connection closes after this error.
    case removed = "removed"
    /// The server API: no room of that name.
    case unknownRoom = "unknown_room"
    /// The server API: creating a room that exists.
    case roomExists = "room_exists"
}
