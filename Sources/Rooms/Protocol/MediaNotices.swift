/// One entry of `active-speakers`: a participant and its speech level,
/// 0 (silence) to 1 (full scale), from the RFC 6464 audio level.
public struct SpeakerLevel: Equatable, Sendable, Codable {
    public var participantId: ParticipantID
    public var level: Double
    public init(participantId: ParticipantID, level: Double) {
        self.participantId = participantId
        self.level = level
    }
}

/// One simulcast encoding of a published track in `publisher-layers`
/// (dynacast): whether any subscriber needs it. The client sets the
/// encoding with this rid `active` or not (RTCRtpEncodingParameters).
public struct LayerActivity: Equatable, Sendable, Codable {
    public var rid: String
    public var active: Bool
    public init(rid: String, active: Bool) {
        self.rid = rid
        self.active = active
    }
}

/// Whether a subscriber receives a track now (`stream-state`).
public enum StreamState: String, Equatable, Sendable, Codable {
    case active, paused
}

/// Why a forwarded track's state or layer changed.
public enum StreamStateReason: String, Equatable, Sendable, Codable {
    /// The subscriber's bandwidth estimate (up or down).
    case bandwidth
    /// The subscriber's own preference.
    case preference
    /// What the publisher sends changed (a layer stopped or came back).
    case publisher
}
