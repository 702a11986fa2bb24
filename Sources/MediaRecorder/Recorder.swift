import MediaRouter
import MediaWorker
import Negotiation
import NetIO
import Recording
import RoomProtocol
import Rooms
import Synchronization
import Wire
import WorkerRelay

#if canImport(Glibc)
    import Glibc
#endif

/// The server's recorder (docs/RECORDING.md): a track sink of the media
/// plane. Each recorded track's source worker copies its packets and
/// Sender Reports into that worker's recorder ring (`RecorderRings`: no
/// lock, no allocation, a full ring drops and counts); the recorder's one
/// thread drains the rings every 10 ms, puts packets back in order and
/// waits for repairs, assembles frames, times them by the Sender Reports
/// and writes one WebM file per participant with libavformat. Keyframe
/// requests go back to the source worker through its mailbox.
///
/// Control (`observe`, `startRecording`, `stopRecording`, `stop`) may come
/// from any thread; it is queued for the recorder thread, which alone
/// holds the recordings.
package final class Recorder: @unchecked Sendable {
    package let options: RecorderOptions
    private let media: MediaPlane
    private let rings: RecorderRings
    private let identity: @Sendable (ParticipantID) -> String?
    private let onFinished: @Sendable (RecordingFinished) -> Void
    private let controls = Mutex<[Control]>([])
    private let running = Atomic<Bool>(true)
    private let active = Atomic<Int>(0)
    private let finishedCount = Atomic<Int>(0)
    private let controlsDropped = Atomic<Int>(0)
    private let roomsSnapshot = Mutex<Set<String>>([])
    private var thread: WorkerThread?

    // The recorder thread's own state.
    /// Every track the rooms layer published, per room and participant,
    /// so that a recording started later finds them.
    private var catalog: [String: [ParticipantID: [String: PublishedTrackDescription]]] = [:]
    /// Rooms being recorded: the track ids chosen, or nil for all.
    private var recordedRooms: [String: Set<String>?] = [:]
    private var recordings: [ParticipantID: ParticipantRecording] = [:]
    private var byRelay: [RelayTrackID: (ParticipantRecording, MediaKind)] = [:]
    /// Participants whose recording ended for good (maximum duration):
    /// not started again while they stay.
    private var ended: Set<ParticipantID> = []
    private var nextRelay: UInt32 = 1
    private var lowDisk = false
    private var lastDiskCheck: Instant?

    enum Control {
        case observe(MediaCommand)
        case start(room: String, tracks: Set<String>?)
        case stop(room: String)
    }

    /// `identity`: a participant's token identity, for file names and
    /// events. `onFinished`: called on the recorder thread for every file
    /// closed.
    package init(
        options: RecorderOptions, media: MediaPlane, identity: @escaping @Sendable (ParticipantID) -> String?,
        onFinished: @escaping @Sendable (RecordingFinished) -> Void
    ) {
        self.options = options
        self.media = media
        self.identity = identity
        self.onFinished = onFinished
        rings = media.connectRecorder()
        // Checked before the first recording can start, then every 5 s.
        lowDisk = Self.isLow(options)
        if lowDisk {
            RecorderLog.line("less than \(options.minimumFreeBytes >> 20) MB free in \(options.directory): not recording")
        }
        thread = WorkerThread(name: "recorder") { [self] in run() }
    }

    // MARK: The API (any thread)

    /// Every rooms-layer media command, as the plane gets it: the recorder
    /// learns of tracks and participants from them.
    package func observe(_ command: MediaCommand) {
        switch command {
        // A track published on another node of a cascaded room is not
        // recorded here: each node records its own publishers, so a room
        // over several nodes is recorded once (docs/RECORDING.md).
        case .addIncomingTrack, .removeIncomingTrack, .releaseParticipant: enqueue(.observe(command))
        default: break
        }
    }

    /// Records `room`: every participant's published audio and video, one
    /// file each, from now on and for tracks published later, until
    /// `stopRecording`. `tracks`: only these track ids (nil: all).
    /// Returns false (nothing queued) for a room name over 256 bytes or
    /// more than 64 track ids: bounds on what an API caller can ask.
    @discardableResult
    package func startRecording(room: String, tracks: Set<String>? = nil) -> Bool {
        guard room.utf8.count <= 256, (tracks?.count ?? 0) <= 64 else { return false }
        enqueue(.start(room: room, tracks: tracks))
        return true
    }

    /// Stops recording `room`: its files are closed (reason `stopped`).
    package func stopRecording(room: String) { enqueue(.stop(room: room)) }

    /// Closes every file (trailer written; reason `server-stopping`) and
    /// ends the thread. Call before the media plane stops.
    package func stop() {
        running.store(false, ordering: .releasing)
        thread?.join()
        thread = nil
    }

    /// Files open now.
    package var activeRecordings: Int { active.load(ordering: .relaxed) }
    package var finishedRecordings: Int { finishedCount.load(ordering: .relaxed) }
    /// Packets and reports the workers dropped because a recorder ring was
    /// full.
    package var packetsDropped: UInt64 { rings.droppedFull }

    /// Prometheus lines for `/metrics` (docs/OPERATIONS.md).
    package var prometheus: String {
        "# HELP swiftlet_recordings_active Recording files open now.\n# TYPE swiftlet_recordings_active gauge\n"
            + "swiftlet_recordings_active \(activeRecordings)\n"
            + "# HELP swiftlet_recordings_finished_total Recording files closed.\n# TYPE swiftlet_recordings_finished_total counter\n"
            + "swiftlet_recordings_finished_total \(finishedRecordings)\n"
            + "# HELP swiftlet_recorder_packets_dropped_total Packets dropped on a full recorder ring.\n"
            + "# TYPE swiftlet_recorder_packets_dropped_total counter\n"
            + "swiftlet_recorder_packets_dropped_total \(packetsDropped)\n"
    }

    /// Controls waiting for the recorder thread: bounded, so a recorder
    /// stuck on a disk cannot make the signalling side grow memory; past
    /// the bound a control is dropped and counted (a track published then
    /// is not recorded).
    package static let controlLimit = 10_000

    private func enqueue(_ c: Control) {
        let queued = controls.withLock { q in
            guard q.count < Self.controlLimit else { return false }
            q.append(c)
            return true
        }
        if !queued { controlsDropped.add(1, ordering: .relaxed) }
    }

    /// Controls dropped on a full queue (`controlLimit`).
    package var droppedControls: Int { controlsDropped.load(ordering: .relaxed) }

    /// The rooms being recorded now (started, or auto-recorded with
    /// participants), as of the recorder thread's last turn (10 ms).
    package var recordingRooms: Set<String> { roomsSnapshot.withLock { $0 } }

    // MARK: The recorder thread

    private func run() {
        while running.load(ordering: .acquiring) {
            let now = MonotonicClock.now()
            let pending = controls.withLock { q in
                defer { q.removeAll(keepingCapacity: true) }
                return q
            }
            for c in pending { handle(c, now: now) }
            publishRecordedRooms()
            drainRings(now: now)
            housekeeping(now: now)
            usleep(10_000)
        }
        drainRings(now: MonotonicClock.now())
        for id in Array(recordings.keys) { finish(id, reason: .serverStopping, now: MonotonicClock.now()) }
    }

    private var publishedRooms: Set<String> = []

    private func publishRecordedRooms() {
        let rooms = Set(recordedRooms.keys)
        guard rooms != publishedRooms else { return }
        publishedRooms = rooms
        roomsSnapshot.withLock { $0 = rooms }
    }

    private func drainRings(now: Instant) {
        for link in rings.links {
            _ = link.ring.drainMessages(limit: RecorderRings.slots) { message in
                switch message {
                case .media(let relay, let layer, _, let packet):
                    guard let (recording, kind) = byRelay[relay] else { return }
                    if kind == .audio {
                        recording.audio?.packet(packet, now: now) { ntp, bytes in
                            recording.add(.audio, ntp: ntp, isKeyframe: true, bytes: bytes)
                        }
                    } else {
                        videoPacket(recording, layer: layer, packet, now: now)
                    }
                case .senderReport(let relay, let layer, let ntp, let rtp):
                    guard let (recording, kind) = byRelay[relay] else { return }
                    if kind == .audio {
                        recording.audio?.senderReport(ntp: ntp, rtpTimestamp: rtp) { t, bytes in
                            recording.add(.audio, ntp: t, isKeyframe: true, bytes: bytes)
                        }
                    } else if var video = recording.video.take() {
                        video.senderReport(layer: layer, ntp: ntp, rtpTimestamp: rtp) { videoOutput($0, recording) }
                        recording.video = video
                    }
                case .layerBitrates, .feedback: break
                }
            }
        }
    }

    private func videoPacket(_ recording: ParticipantRecording, layer: Int, _ packet: UnsafeRawBufferPointer, now: Instant) {
        guard var video = recording.video.take() else { return }
        video.packet(layer: layer, packet, now: now) { videoOutput($0, recording) }
        recording.video = video
    }

    private func videoOutput(_ output: VideoTrackRecorder.Output, _ recording: ParticipantRecording) {
        switch output {
        case .frame(let ntp, let isKeyframe, let width, let height, let bytes):
            if let width, let height, recording.videoSize == nil { recording.videoSize = (Int32(width), Int32(height)) }
            recording.add(.video, ntp: ntp, isKeyframe: isKeyframe, bytes: bytes)
        case .keyframeRequest(let layer):
            if let t = recording.videoTrack { media.requestRecorderKeyframe(relay: t.relay, layer: layer, worker: t.worker) }
        }
    }

    private func housekeeping(now: Instant) {
        for recording in recordings.values {
            recording.audio?.tick(now: now) { ntp, bytes in recording.add(.audio, ntp: ntp, isKeyframe: true, bytes: bytes) }
            if var video = recording.video.take() {
                video.tick(now: now) { videoOutput($0, recording) }
                recording.video = video
            }
            if recording.writer != nil, now - recording.lastFlush >= .seconds(1) {
                recording.bytes = recording.writer!.flush()
                recording.lastFlush = now
            }
        }
        for (id, recording) in recordings {
            let reason: RecordingFinished.Reason
            if now - recording.startedAt >= options.maximumDuration {
                reason = .maximumDuration
            } else if recording.bytes >= options.maximumFileBytes {
                reason = .maximumSize
            } else {
                continue
            }
            finish(id, reason: reason, now: now)
            ended.insert(id)
        }
        if lastDiskCheck.map({ now - $0 >= .seconds(5) }) ?? true {
            lastDiskCheck = now
            let wasLow = lowDisk
            lowDisk = Self.isLow(options)
            if lowDisk != wasLow {
                RecorderLog.line(
                    lowDisk
                        ? "less than \(options.minimumFreeBytes >> 20) MB free in \(options.directory): recordings stop"
                        : "free space in \(options.directory) is back: recording again")
            }
            if lowDisk {
                for id in Array(recordings.keys) { finish(id, reason: .lowDisk, now: now) }
            } else if wasLow {
                // The rooms still recorded start new files.
                for (room, tracks) in recordedRooms { recordPublished(in: room, tracks: tracks, now: now) }
            }
        }
    }

    private func handle(_ control: Control, now: Instant) {
        switch control {
        case .observe(.addIncomingTrack(let room, let participant, let trackID, let description)):
            catalog[room, default: [:]][participant, default: [:]][trackID] = description
            if recordedRooms[room] == nil, options.autoRecords(room) { recordedRooms[room] = .some(nil) }
            if let chosen = recordedRooms[room], chosen?.contains(trackID) ?? true {
                record(room: room, participant: participant, trackID: trackID, description, now: now)
            }
        case .observe(.removeIncomingTrack(let room, let participant, let trackID)):
            catalog[room]?[participant]?[trackID] = nil
            if let r = recordings[participant], r.tracks.contains(where: { $0.trackID == trackID }) {
                finish(participant, reason: .participantLeft, now: now, gone: [trackID])
            }
        case .observe(.releaseParticipant(let room, let participant)):
            catalog[room]?[participant] = nil
            if catalog[room]?.isEmpty == true {
                // The room's recording ends with its last participant; an
                // auto-recorded room starts again with its next track.
                catalog[room] = nil
                recordedRooms[room] = nil
            }
            ended.remove(participant)
            if let r = recordings[participant] {
                finish(participant, reason: .participantLeft, now: now, gone: Set(r.tracks.map(\.trackID)))
            }
        case .observe: break
        case .start(let room, let tracks):
            recordedRooms[room] = .some(tracks)
            recordPublished(in: room, tracks: tracks, now: now)
        case .stop(let room):
            recordedRooms[room] = nil
            for (id, r) in recordings where r.room == room { finish(id, reason: .stopped, now: now) }
        }
    }

    /// Records what `room`'s participants publish now (`tracks`: only
    /// these ids).
    private func recordPublished(in room: String, tracks: Set<String>?, now: Instant) {
        for (participant, published) in catalog[room] ?? [:] {
            for (trackID, description) in published.sorted(by: { $0.key < $1.key }) where tracks?.contains(trackID) ?? true {
                record(room: room, participant: participant, trackID: trackID, description, now: now)
            }
        }
    }

    /// Adds one track to its participant's recording (made on its first
    /// track) and asks its source worker for the sink.
    private func record(
        room: String, participant: ParticipantID, trackID: String, _ description: PublishedTrackDescription, now: Instant
    ) {
        guard !ended.contains(participant), !lowDisk else { return }
        let kind = description.kind
        guard let codec = description.codecs.first?.codec,
            codec == .opus || codec == .video(.vp8)
        else {
            return RecorderLog.line("room \(room) track \(trackID): not recorded (only VP8 and Opus are)")
        }
        let recording: ParticipantRecording
        if let r = recordings[participant] {
            recording = r
        } else {
            let identity = identity(participant)
            guard let path = makePath(room: room, identity: identity, participant: participant) else { return }
            recording = ParticipantRecording(room: room, participant: participant, identity: identity, path: path, now: now)
            recordings[participant] = recording
            active.store(recordings.count, ordering: .relaxed)
        }
        // One track of each kind per file: a second one is left out.
        if (kind == .audio ? recording.audioTrack : recording.videoTrack) != nil || recording.timeline != nil { return }
        let relay = RelayTrackID(nextRelay)
        nextRelay &+= 1
        guard let worker = media.addRecorderSink(room: room, trackID: trackID, relay: relay) else { return }
        let track = ParticipantRecording.Track(trackID: trackID, relay: relay, worker: worker)
        byRelay[relay] = (recording, kind)
        if kind == .audio {
            recording.audioTrack = track
            recording.audio = AudioTrackRecorder(repairWait: options.repairWait)
        } else {
            recording.videoTrack = track
            recording.video = VideoTrackRecorder(
                layerCount: max(1, description.simulcast.count), repairWait: options.repairWait)
            // A keyframe at once: nothing is written before one.
            media.requestRecorderKeyframe(relay: relay, layer: max(0, description.simulcast.count - 1), worker: worker)
        }
    }

    /// Closes a participant's file. `gone`: its tracks the worker has
    /// removed already (with their sinks), so no removal is sent for them.
    private func finish(
        _ participant: ParticipantID, reason: RecordingFinished.Reason, now: Instant, gone: Set<String> = []
    ) {
        guard let r = recordings.removeValue(forKey: participant) else { return }
        for t in r.tracks {
            byRelay[t.relay] = nil
            if !gone.contains(t.trackID), reason != .serverStopping {
                media.removeRecorderSink(room: r.room, trackID: t.trackID, worker: t.worker)
            }
        }
        // What still waits for a repair is written, gaps skipped.
        r.audio?.finish { ntp, bytes in r.add(.audio, ntp: ntp, isKeyframe: true, bytes: bytes) }
        if var video = r.video.take() {
            video.finish(now: now) { videoOutput($0, r) }
            r.video = video
        }
        active.store(recordings.count, ordering: .relaxed)
        guard let event = r.finish(reason: reason) else { return }
        finishedCount.add(1, ordering: .relaxed)
        onFinished(event)
    }

    /// `directory/<room>/<identity or participant>-<UTC start>.webm`, the
    /// room's folder made on the way; nil (logged) when it cannot be.
    private func makePath(room: String, identity: String?, participant: ParticipantID) -> String? {
        let folder = options.directory + "/" + Self.safeName(room)
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            RecorderLog.line("cannot make \(folder): errno \(errno)")
            return nil
        }
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        let stamp = String(
            format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        return folder + "/" + Self.safeName(identity ?? participant.rawValue) + "-" + stamp + "-" + participant.rawValue
            + ".webm"
    }

    /// A path component from untrusted text: letters, digits, `.`, `_`
    /// and `-` kept, anything else `_`, at most 64 characters, never `.`
    /// or `..`.
    static func safeName(_ text: String) -> String {
        let kept = text.unicodeScalars.prefix(64).map { c -> Character in
            (c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "-" || c == "_" || c == "."))
                ? Character(c) : "_"
        }
        let name = String(kept)
        return name.isEmpty || name.allSatisfy({ $0 == "." }) ? "_" : name
    }

    /// Whether the directory's file system is under the minimum (or
    /// cannot be read: then nothing could be written either).
    static func isLow(_ options: RecorderOptions) -> Bool {
        freeBytes(options.directory).map { $0 < options.minimumFreeBytes } ?? true
    }

    /// Free bytes for an unprivileged writer on `path`'s file system
    /// (statvfs(3)); nil when it cannot be read.
    static func freeBytes(_ path: String) -> Int64? {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return nil }
        return Int64(s.f_bavail) * Int64(s.f_frsize)
    }
}
