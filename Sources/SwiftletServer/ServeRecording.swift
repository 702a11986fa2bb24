import MediaRecorder
import MediaWorker
import SignalingServer
import Synchronization
import Webhooks

#if canImport(Glibc)
    import Glibc
#endif

/// `swiftlet serve --record-dir`: the recorder, and where its events go
/// (docs/RECORDING.md): a finished file is a log line on stdout and, with
/// webhooks, a `recording_finished` event (docs/API.md).
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
                guard let notifier = service.service.withLock({ $0 })?.webhookNotifier else { return }
                let stamp = notifier.nextEventStamp()
                let info = WebhookEvent.RecordingInfo(
                    id: event.participant, files: [event.path], durationSeconds: Double(event.milliseconds) / 1000,
                    status: event.reason.rawValue)
                notifier.notify(
                    WebhookEvent.recordingFinished(room: event.room, recording: info, id: stamp.id, createdAt: stamp.createdAt))
            })
    }
}

// The server API starts and stops recordings through this (its methods
// are the recorder's own).
extension Recorder: RecordingControl {}
