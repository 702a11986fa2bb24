import RoomProtocol

/// Why the rooms layer refused a request that is answered synchronously
/// (WHIP and WHEP over HTTP), with the room protocol's error code; the
/// HTTP shell maps the code to a status.
package struct RoomError: Error, Equatable, Sendable {
    package var code: ErrorCode
    package var message: String
    package init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// Which HTTP session protocol a participant came through.
package enum HTTPSessionKind: String, Equatable, Sendable {
    /// WebRTC-HTTP Ingestion Protocol (RFC 9725): the client publishes.
    case whip
    /// WebRTC-HTTP Egress Protocol: the client plays.
    case whep
}

/// An accepted WHIP or WHEP offer: what the 201 response carries, and the
/// effects for the others in the room and for the media worker.
package struct HTTPSessionAnswer: Equatable, Sendable {
    package var participant: ParticipantID
    /// The session's id: the last segment of its Location, unguessable.
    package var session: String
    /// The SDP answer.
    package var answer: String
    /// The entity tag of the session's ICE state, quoted (RFC 9110 section
    /// 8.8.3): our ICE ufrag, which an ICE restart would change.
    package var etag: String
    package var effects: [RoomEffect]
}
