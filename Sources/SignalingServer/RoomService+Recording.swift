import RoomProtocol

extension RoomService {
    /// The identity `participant` joined with, while it is in a room: the
    /// recorder names files and events by it (docs/RECORDING.md).
    package func identity(of participant: ParticipantID) -> String? {
        state.withLock { $0.directory.identity(of: participant) }
    }
}
