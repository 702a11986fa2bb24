import RoomProtocol

/// What a media worker tells the rooms layer about an SFU room: the
/// reverse direction of `MediaCommand`. The rooms layer turns each into
/// messages for the participants concerned (`RoomDirectory.handle(_:)`).
package enum MediaEvent: Equatable, Sendable {
    /// The room's active speakers changed (at most about three times a
    /// second per room; the worker rate-limits).
    case activeSpeakers(room: String, speakers: [SpeakerLevel])
    /// Dynacast: which simulcast layers of a published track some
    /// subscriber needs.
    case publisherLayers(room: String, publisher: ParticipantID, trackID: String, layers: [LayerActivity])
    /// A subscription's state or forwarded layer changed.
    case streamState(
        room: String, subscriber: ParticipantID, trackID: String, state: StreamState, layer: Int?, reason: StreamStateReason)
    /// A message a participant sent on its data channel `label` (never on
    /// the media path: the worker reads it from SCTP and posts it here).
    case dataReceived(room: String, sender: ParticipantID, label: String, isText: Bool, payload: [UInt8])

    package var room: String {
        switch self {
        case .activeSpeakers(let room, _), .publisherLayers(let room, _, _, _), .streamState(let room, _, _, _, _, _),
            .dataReceived(let room, _, _, _, _):
            room
        }
    }
}
