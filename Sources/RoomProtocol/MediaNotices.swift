/// One entry of `active-speakers`: a participant and its speech level,
/// 0 (silence) to 1 (full scale), from the RFC 6464 audio level.
package struct SpeakerLevel: Equatable, Sendable, Codable {
    package var participantId: ParticipantID
    package var level: Double
    package init(participantId: ParticipantID, level: Double) {
        self.participantId = participantId
        self.level = level
    }
}

/// One simulcast encoding of a published track in `publisher-layers`
/// (dynacast): whether any subscriber needs it. The client sets the
/// encoding with this rid `active` or not (RTCRtpEncodingParameters).
package struct LayerActivity: Equatable, Sendable, Codable {
    package var rid: String
    package var active: Bool
    package init(rid: String, active: Bool) {
        self.rid = rid
        self.active = active
    }
}

/// Whether a subscriber receives a track now (`stream-state`).
package enum StreamState: String, Equatable, Sendable, Codable {
    case active, paused
}

/// Why a forwarded track's state or layer changed.
package enum StreamStateReason: String, Equatable, Sendable, Codable {
    /// The subscriber's bandwidth estimate (up or down).
    case bandwidth
    /// The subscriber's own preference.
    case preference
    /// What the publisher sends changed (a layer stopped or came back).
    case publisher
}
