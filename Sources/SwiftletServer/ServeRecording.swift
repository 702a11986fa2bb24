import MediaRecorder
import MediaWorker
import SignalingServer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `swiftlet serve --record-dir`: the recorder, and where its events go
/// (docs/RECORDING.md). A finished recording is one log line on stdout
/// now; the webhook sender (issue #16) will take the same value.
enum ServeRecording {
    /// The room service, set once it exists (it is made after the
    /// recorder, which must see the first track).
    final class ServiceSlot: Sendable {
        let service = Mutex<RoomService?>(nil)
    }

    static func start(_ options: ServeOptions, media: MediaPlane, service: ServiceSlot) -> Recorder? {
        guard let directory = options.recordDirectory else { return nil }
        var recording = RecorderOptions(directory: directory)
        recording.autoRecordRooms = options.recordRooms
        recording.maximumDuration = options.recordMaxDuration
        recording.minimumFreeBytes = options.recordMinFreeMB << 20
        return Recorder(
            options: recording, media: media,
            identity: { participant in service.service.withLock { $0?.identity(of: participant) } },
            onFinished: { event in
                print("swiftlet: \(event)")
                fflush(nil)
            })
    }
}
