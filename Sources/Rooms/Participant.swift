import ICE
import Negotiation
import RoomProtocol
import Wire

/// A participant's state inside the directory.
struct Participant {
    let id: ParticipantID
    let identity: String
    /// The grants of the token it joined or last resumed with.
    var grants: Grants
    var room: String
    /// Data channel messages it may still send now (docs/PROTOCOL.md).
    var dataBucket = DataRateBucket()
    /// nil while disconnected within the grace period.
    var connection: ConnectionID?
    /// When a disconnected participant is dropped.
    var graceDeadline: Instant?
    var tracks: [TrackInfo] = []
    /// The call this participant is in (ringing or started).
    var call: CallID?
    /// The room to return to when the call ends (its room before the call).
    var roomBeforeCall: String?
    /// The transport this participant publishes on (SFU rooms).
    var publisher: PublisherState?
    /// The transport this participant receives on (SFU rooms).
    var subscriber: SubscriberState?
    /// How the participant is connected: a WebSocket, or an HTTP session.
    var kind: ParticipantKind = .webSocket
    /// The WHIP/WHEP session id (the last segment of its Location).
    var session: String?
    /// A WHEP participant's transport: it offered, we send.
    var playback: PlaybackState?
    /// The media worker holding this participant's transports, chosen when
    /// its first transport opens (`RoomDirectory.mediaWorker(for:)`).
    var worker: Int?
    /// Set for a participant another node serves (the cascade): its node
    /// and tracks (`RoomDirectory+Remote.swift`).
    var remote: RemoteState?
    /// Set by the server API; at most `RoomOptions.maxMetadataBytes`.
    var metadata = ""

    var info: ParticipantInfo {
        ParticipantInfo(id: id, identity: identity, tracks: tracks, metadata: metadata.isEmpty ? nil : metadata)
    }
}

/// A room: who is in it and how it carries media.
struct Room {
    let name: String
    var options: RoomOptions
    var mode: RoomMode { options.mode }
    /// When an empty room with an `emptyTimeout` closes; nil while it has
    /// members, or when it emptied and the next `closeEmptyRooms` has not
    /// stamped it yet (`exit` has no time of its own).
    var emptyDeadline: Instant?
    var members: [ParticipantID] = []
    /// A private two-party room made for a call.
    var isCallRoom = false
    /// The room's first media worker: its participants share it while the
    /// room is small (`WorkerPlacement`).
    var worker = 0
}

/// A one-to-one call (the SkyWay model): ringing until the callee
/// answers or declines, then both are moved to a private room.
struct Call {
    let id: CallID
    let caller: ParticipantID
    let callee: ParticipantID
    var room: String?
}

/// A participant's publisher transport: it offers, we answer.
struct PublisherState {
    let credentials: ICECredentials
    var answerer: PublishAnswerer
    /// Published tracks by track id, with what their m-section said.
    var tracks: [String: PublishedTrackDescription] = [:]
    /// The publish offer had a data channel section: relayed messages
    /// may be sent to this participant.
    var dataChannels = false
}

/// A participant's subscriber transport: we offer, it answers.
struct SubscriberState {
    let credentials: ICECredentials
    var builder: SubscriberOfferBuilder
    /// The client's transport parameters are known (first answer applied).
    var remoteKnown = false
    /// What this participant receives, by published track id.
    var subscriptions: [String: OutgoingTrack] = [:]
    /// The last `set-preference` per track id, kept when the track's
    /// subscription ends, so that a new subscription to the same id starts
    /// with it: a remote publisher whose node's part was briefly unread
    /// (the cascade) or a track republished under its id comes back
    /// without the client asking again (roombot's `--layout` asks once per
    /// track; a capped far subscriber lost its cap that way and its node's
    /// relay carried every layer). At most the subscription limit of
    /// entries for tracks not subscribed now (`rememberPreference`).
    var preferences: [String: ReceivePreference] = [:]

    /// Records `preference` for `trackID`; past `limit` entries, those of
    /// tracks not subscribed now are forgotten.
    mutating func rememberPreference(_ preference: ReceivePreference, for trackID: String, limit: Int) {
        preferences[trackID] = preference
        if preferences.count > 2 * limit { preferences = preferences.filter { subscriptions[$0.key] != nil } }
    }
}

/// How a participant reaches the server. HTTP participants (WHIP, WHEP)
/// have no signalling connection: nothing is ever sent to them, they
/// cannot be called, and they leave by DELETE or when their transport
/// fails.
enum ParticipantKind: Equatable {
    case webSocket
    /// Publishes one offer's tracks (RFC 9725).
    case whip
    /// Plays one publisher's tracks (WHEP).
    case whep
    /// Served by another node of the cluster (a room spanning nodes).
    case remote(node: String)
}

/// A WHEP participant's transport: the client offered recvonly sections,
/// we answered with the publisher's tracks.
struct PlaybackState {
    let credentials: ICECredentials
    var answerer: PlaybackAnswerer
    /// The participant whose tracks are played.
    let publisher: ParticipantID
    /// What this participant receives, by published track id.
    var tracks: [String: OutgoingTrack] = [:]
}
