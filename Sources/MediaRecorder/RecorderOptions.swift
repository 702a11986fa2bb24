/// What `swiftlet serve --record-dir` sets (docs/RECORDING.md,
/// docs/CONFIGURATION.md).
package struct RecorderOptions: Equatable, Sendable {
    /// Files go to `directory/<room>/`.
    package var directory: String
    /// Rooms recorded from their first track without an API call: room
    /// names, each possibly ending in `*` (a prefix); empty: none.
    package var autoRecordRooms: [String] = []
    /// No file starts, and every open one is closed, while the
    /// directory's file system has less free space than this.
    package var minimumFreeBytes: Int64 = 512 << 20
    /// A file is closed at this length (reason `max-duration`).
    package var maximumDuration: Duration = .seconds(4 * 3600)
    /// A file is closed at this size (reason `max-size`), checked every
    /// second: a bound whatever the publisher sends.
    package var maximumFileBytes: Int64 = 16 << 30
    /// How long a missing packet is waited for (the server's NACK to the
    /// publisher and its retransmission) before it is given up.
    package var repairWait: Duration = .milliseconds(400)

    package init(directory: String) { self.directory = directory }

    /// Whether `room` is recorded automatically.
    package func autoRecords(_ room: String) -> Bool {
        autoRecordRooms.contains { pattern in
            pattern.hasSuffix("*") ? room.hasPrefix(pattern.dropLast()) : room == pattern
        }
    }
}

/// One file finished: the event the server logs now and will send to
/// webhooks (issue #16, `recording_finished`).
package struct RecordingFinished: Equatable, Sendable, CustomStringConvertible {
    package enum Reason: String, Equatable, Sendable {
        /// The participant left the room (or its tracks were unpublished).
        case participantLeft = "participant-left"
        /// `stopRecording(room:)`.
        case stopped
        case maximumDuration = "max-duration"
        case maximumSize = "max-size"
        /// Free space under `minimumFreeBytes`.
        case lowDisk = "low-disk"
        /// SIGTERM drain, or the server stopping.
        case serverStopping = "server-stopping"
        /// libavformat refused a write (the file is closed as far as it
        /// can be).
        case writeFailed = "write-failed"
    }

    package var room: String
    package var participant: String
    package var identity: String?
    package var path: String
    /// The file's media length.
    package var milliseconds: Int64
    package var bytes: Int64
    package var reason: Reason

    package var description: String {
        "recording finished room=\(room) participant=\(participant) identity=\(identity ?? "-") path=\(path)"
            + " duration_ms=\(milliseconds) bytes=\(bytes) reason=\(reason.rawValue)"
    }
}
