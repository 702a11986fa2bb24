import RoomProtocol
import Synchronization

/// What the server API needs of the recorder (`swiftlet serve
/// --record-dir`; docs/RECORDING.md): the app attaches it, so this target
/// does not depend on the media side.
package protocol RecordingControl: AnyObject, Sendable {
    /// Starts recording `room` (every track, or those named); false when
    /// the request is out of bounds.
    func startRecording(room: String, tracks: Set<String>?) -> Bool
    func stopRecording(room: String)
    /// The rooms being recorded now.
    var recordingRooms: Set<String> { get }
}

extension RoomService {
    /// The identity `participant` joined with, while it is in a room: the
    /// recorder names files and events by it (docs/RECORDING.md).
    package func identity(of participant: ParticipantID) -> String? {
        state.withLock { $0.directory.identity(of: participant) }
    }

    /// The recorder the server API starts and stops (nil: the server runs
    /// without `--record-dir`).
    package func attachRecorder(_ recorder: any RecordingControl) {
        recorderBox.withLock { $0 = recorder }
    }

    var recorder: (any RecordingControl)? { recorderBox.withLock { $0 } }
}
