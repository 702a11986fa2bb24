import Negotiation
import Recording
import RoomProtocol
import Wire
import WorkerRelay

/// One participant's file: its recorded audio and video tracks, their
/// shared timeline and the writer, opened at the timeline's first frame.
/// Lives on the recorder thread only.
final class ParticipantRecording {
    struct Track {
        var trackID: String
        var relay: RelayTrackID
        /// The track's source worker (keyframe requests go there).
        var worker: Int
    }

    let room: String
    let participant: ParticipantID
    let identity: String?
    let path: String
    let startedAt: Instant
    var audioTrack: Track?
    var videoTrack: Track?
    var audio: AudioTrackRecorder?
    var video: VideoTrackRecorder?
    var timeline: RecordingTimeline?
    var writer: WebMFileWriter?
    var videoSize: (width: Int32, height: Int32)?
    var lastFlush: Instant
    /// The file's size at the last flush.
    var bytes: Int64 = 0
    var failed = false

    init(room: String, participant: ParticipantID, identity: String?, path: String, now: Instant) {
        self.room = room
        self.participant = participant
        self.identity = identity
        self.path = path
        startedAt = now
        lastFlush = now
    }

    var tracks: [Track] { [audioTrack, videoTrack].compactMap { $0 } }

    /// Frames from the track recorders go through the timeline; the file
    /// opens with the first frames it lets through.
    func add(_ stream: RecordingTimeline.Stream, ntp: Int64, isKeyframe: Bool, bytes: [UInt8]) {
        guard !failed else { return }
        if timeline == nil { timeline = RecordingTimeline(hasVideo: videoTrack != nil) }
        let frames = timeline!.add(stream, ntpMicroseconds: ntp, isKeyframe: isKeyframe, bytes: bytes)
        guard !frames.isEmpty else { return }
        do throws(WebMFileWriter.Failure) {
            if writer == nil {
                writer = try WebMFileWriter(
                    path: path, video: videoTrack != nil ? (videoSize ?? (640, 480)) : nil, audio: audioTrack != nil)
            }
            for f in frames {
                // Audio is stream 0 when there is audio; the tracks are fixed
                // once the timeline exists.
                let hasAudio = audioTrack != nil
                let index: Int32? = f.stream == .audio ? (hasAudio ? 0 : nil) : (videoTrack != nil ? (hasAudio ? 1 : 0) : nil)
                guard let index else { continue }
                try writer!.write(
                    stream: index, milliseconds: f.milliseconds, duration: f.durationMilliseconds,
                    isKeyframe: f.isKeyframe, bytes: f.bytes)
            }
        } catch {
            failed = true
            RecorderLog.line("recording \(path): \(error)")
        }
    }

    /// Closes the file (trailer written) and says what it holds; nil when
    /// no frame was ever written (no file was made).
    func finish(reason: RecordingFinished.Reason) -> RecordingFinished? {
        guard var w = writer.take() else { return nil }
        var bytes: Int64 = 0
        do throws(WebMFileWriter.Failure) {
            bytes = try w.finish()
        } catch {
            RecorderLog.line("recording \(path): \(error)")
        }
        return RecordingFinished(
            room: room, participant: participant.rawValue, identity: identity, path: path,
            milliseconds: timeline?.duration ?? 0, bytes: bytes, reason: failed ? .writeFailed : reason)
    }
}
