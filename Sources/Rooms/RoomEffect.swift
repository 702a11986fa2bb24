import DTLS
import ICE
import Negotiation
import RoomProtocol
import Wire
import WorkerRelay

/// The verified content of a `join`: the signalling shell checked the
/// token's signature, expiry and room before the rooms layer sees it.
package struct JoinRequest: Equatable, Sendable {
    package var identity: String
    package var room: String
    package var grants: Grants
    /// The mode to create the room in, if it does not exist yet.
    package var mode: RoomMode?
    package init(identity: String, room: String, grants: Grants, mode: RoomMode? = nil) {
        self.identity = identity
        self.room = room
        self.grants = grants
        self.mode = mode
    }
}

/// What the rooms layer decides; the shell carries it out. Tests assert
/// on these values (STYLE.md item 3).
package enum RoomEffect: Equatable, Sendable {
    /// Send a message on a connection.
    case send(ConnectionID, ServerMessage)
    /// Close a connection (replaced by a newer one of the same identity).
    case close(ConnectionID)
    /// Work for the media layer of the room's worker.
    case media(MediaCommand)
}

/// Which of a participant's two transports.
package enum TransportRole: String, Equatable, Sendable {
    /// The participant sends; it offered.
    case publisher
    /// The participant receives; we offered.
    case subscriber
}

/// What the media layer must do for SFU rooms. The rooms layer decides
/// who forwards what to whom; the worker owning the room (`worker`, an
/// index into `MediaEndpoint.workers`) executes it.
package enum MediaCommand: Equatable, Sendable {
    /// Create a server-role transport with these local credentials; the
    /// remote parameters come now (publisher) or with the first answer.
    case openTransport(
        room: String, worker: Int, participant: ParticipantID, role: TransportRole,
        local: ICECredentials, remote: RemoteTransportParameters?)
    /// The client's transport parameters (first subscriber answer).
    case setRemote(room: String, participant: ParticipantID, role: TransportRole, remote: RemoteTransportParameters)
    /// A published m-section: how to recognise its packets (mid/rid
    /// extensions, SSRCs, payload types).
    case addIncomingTrack(room: String, participant: ParticipantID, trackID: String, description: PublishedTrackDescription)
    case removeIncomingTrack(room: String, participant: ParticipantID, trackID: String)
    /// Forward the track to a subscriber as `outgoing` (its SSRC and payload type).
    case forward(room: String, trackID: String, subscriber: ParticipantID, outgoing: OutgoingTrack)
    case stopForward(room: String, trackID: String, subscriber: ParticipantID)
    /// The subscriber's receive preference for a track.
    case setPreference(room: String, trackID: String, subscriber: ParticipantID, preference: ReceivePreference)
    /// The participant is gone: close its transports and stop every
    /// forwarding to or from it.
    case releaseParticipant(room: String, participant: ParticipantID)
    /// The participant's publish offer had a data channel section (RFC
    /// 8841): run SCTP on its publisher transport, to the peer's
    /// `a=sctp-port`.
    case enableDataChannels(room: String, participant: ParticipantID, remotePort: UInt16)
    /// Send one relayed message on the participant's data channel labelled
    /// `label` (docs/PROTOCOL.md "Data channels"); dropped when it has none.
    case sendData(room: String, participant: ParticipantID, label: String, isText: Bool, payload: [UInt8])
    /// A muted track's packets go nowhere (no subscriber, no relay) until
    /// it is unmuted, when its publisher is asked for a keyframe: what
    /// `mute` (the publisher's own, or the server API's) enforces.
    case setTrackMuted(room: String, participant: ParticipantID, trackID: String, muted: Bool)

    // The cascade (issue #15, docs/CLUSTER.md): a room whose participants
    // are served by several nodes. A track published on another node is
    // removed with `removeIncomingTrack` and its remote publisher with
    // `releaseParticipant`, as local ones are.

    /// A track published on another node: its packets arrive over the
    /// node relay from `node` (a node id) as `relay`, the id the source
    /// node gave the track. It is forwarded to this node's subscribers
    /// like a local track.
    case addRemoteTrack(
        room: String, participant: ParticipantID, trackID: String, description: PublishedTrackDescription,
        node: String, relay: RelayTrackID)
    /// Another node's subscribers want this node's track `trackID`: send
    /// its packets (the layers that node asks for) over the node relay to
    /// `node` as `relay`, once per packet however many subscribers it has.
    case addRemoteSink(room: String, trackID: String, node: String, relay: RelayTrackID)
    case removeRemoteSink(room: String, trackID: String, node: String)
}

/// Where SFU media is received: the server's DTLS certificate fingerprint
/// and, per media worker, the ICE candidates (its UDP port on each
/// announced address).
package struct MediaEndpoint: Equatable, Sendable {
    package var fingerprint: CertificateFingerprint
    package var workers: [[ICECandidate]]
    package init(fingerprint: CertificateFingerprint, workers: [[ICECandidate]]) {
        self.fingerprint = fingerprint
        self.workers = workers
    }
}
