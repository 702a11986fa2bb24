import Negotiation
import RoomProtocol
import Rooms
import WorkerRelay

/// What the media plane asks of one worker. The rooms layer speaks
/// `MediaCommand`s about a room as a whole; when a room spans workers the
/// plane turns each into commands for the workers that hold a part of it
/// (the participant's own worker, the track's source worker, the workers
/// that relay it), adding the relay commands below.
package enum WorkerCommand: Equatable, Sendable {
    /// A rooms-layer command for this worker's part of the room.
    case media(MediaCommand)
    /// Far side: `publisher`'s track `trackID`, whose packets arrive from
    /// worker `from` as `relay` rather than from a transport here.
    case addRelayedTrack(
        room: String, publisher: ParticipantID, trackID: String, description: PublishedTrackDescription,
        relay: RelayTrackID, from: Int)
    case removeRelayedTrack(room: String, trackID: String)
    /// Source side: also send the track's packets to worker `to` as
    /// `relay`, once per packet.
    case addRelaySink(room: String, trackID: String, relay: RelayTrackID, to: Int)
    case removeRelaySink(room: String, trackID: String, to: Int)
    /// Source side: also send the track's packets, every layer, and its
    /// Sender Reports to the server's recorder as `relay`
    /// (docs/RECORDING.md); the recorder asks for keyframes as a far
    /// worker does, from `RoomRouter.recorderSlot`.
    case addRecorderSink(room: String, trackID: String, relay: RelayTrackID)
    case removeRecorderSink(room: String, trackID: String)
    /// Whether this worker reports the room's active speakers (one worker
    /// per room does, so participants get one list).
    case setSpeakerReporter(room: String, Bool)
}
