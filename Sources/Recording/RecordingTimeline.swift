import Codecs
import Wire

/// One recording file's timeline: puts a participant's audio and video
/// frames, timed on the sender's wall clock (`SenderReportClock`), on the
/// file's clock in milliseconds (Matroska's default timestamp scale,
/// 1 ms), both from one origin, so they play in sync.
///
/// The file starts with video's first keyframe when the participant has
/// video (a player can decode nothing before it), else with the first
/// audio frame. Audio that arrives before that keyframe is held (up to
/// `audioHoldback`, oldest dropped first) and written from the keyframe's
/// instant on, so both streams start within one audio frame (20 ms) of
/// each other. Each stream's timestamps only go forward (the muxer
/// refuses anything else): an audio frame that would go back (a sender
/// clock step, a stale Sender Report) is dropped and counted, a video
/// frame is moved to 1 ms after the previous one, since later frames
/// reference it. An audio frame never starts
/// before the previous one ends (its length from the Opus TOC, RFC 6716
/// section 3.1): a sender's reports can disagree with its RTP clock by
/// tens of milliseconds, and overlapping frames would make a player's
/// decoded audio go back in time; up to `audioSlip` early it is moved to
/// the previous frame's end, earlier still it is dropped.
package struct RecordingTimeline: Sendable {
    package enum Stream: Int, Equatable, Sendable {
        case audio = 0
        case video = 1
    }

    /// A frame to write, on the file's clock.
    package struct TimedFrame: Equatable, Sendable {
        package var stream: Stream
        package var milliseconds: Int64
        /// Audio: the Opus packet's length (20 ms when unreadable); video: 0.
        package var durationMilliseconds: Int64 = 0
        package var isKeyframe: Bool
        package var bytes: [UInt8]
    }

    package struct Statistics: Equatable, Sendable {
        /// Video frames before the first keyframe.
        package var videoBeforeStart = 0
        /// Audio before the file's start, or pushed out of the holdback.
        package var audioBeforeStart = 0
        /// Audio frames whose timestamp would have gone back.
        package var outOfOrder = 0
        /// Video frames moved forward to keep timestamps increasing.
        package var videoNudged = 0
        package init() {}
    }

    package let hasVideo: Bool
    package let audioHoldback: Int
    /// The NTP microseconds of the file's time zero; nil until it starts.
    package private(set) var origin: Int64?
    package private(set) var statistics = Statistics()
    private var held: [(ntp: Int64, bytes: [UInt8])] = []
    private var last: [Int64?] = [nil, nil]
    private var audioEnd: Int64?
    package static let audioSlip: Int64 = 100

    /// `audioHoldback`: at most this many audio frames wait for video's
    /// first keyframe (100: two seconds of 20 ms Opus frames).
    package init(hasVideo: Bool, audioHoldback: Int = 100) {
        self.hasVideo = hasVideo
        self.audioHoldback = max(0, audioHoldback)
    }

    /// The file's time of the last frame written, in milliseconds: its
    /// duration so far.
    package var duration: Int64 { max(audioEnd ?? 0, last[1] ?? 0) }

    /// One frame at `ntpMicroseconds`; returns what to write now, in order.
    package mutating func add(
        _ stream: Stream, ntpMicroseconds ntp: Int64, isKeyframe: Bool, bytes: [UInt8]
    ) -> [TimedFrame] {
        if origin == nil {
            switch stream {
            case .video where !isKeyframe:
                statistics.videoBeforeStart += 1
                return []
            case .video:
                origin = ntp
                var out: [TimedFrame] = []
                for frame in held where frame.ntp >= ntp {
                    if let f = timed(.audio, ntp: frame.ntp, isKeyframe: true, bytes: frame.bytes) { out.append(f) }
                }
                statistics.audioBeforeStart += held.count - out.count
                held.removeAll()
                // Audio goes first at equal times: the video frame's own
                // time is the origin, so it is 0.
                if let f = timed(.video, ntp: ntp, isKeyframe: true, bytes: bytes) { out.append(f) }
                return out
            case .audio where hasVideo:
                if held.count >= audioHoldback {
                    if held.isEmpty {
                        statistics.audioBeforeStart += 1
                        return []
                    }
                    held.removeFirst()
                    statistics.audioBeforeStart += 1
                }
                held.append((ntp, bytes))
                return []
            case .audio:
                origin = ntp
            }
        }
        return timed(stream, ntp: ntp, isKeyframe: isKeyframe, bytes: bytes).map { [$0] } ?? []
    }

    private mutating func timed(_ stream: Stream, ntp: Int64, isKeyframe: Bool, bytes: [UInt8]) -> TimedFrame? {
        guard let origin else { return nil }
        // Rounded to the nearest millisecond.
        var ms = (ntp - origin + 500).floorDivided(by: 1000)
        var duration: Int64 = 0
        if stream == .audio {
            duration = Self.opusMilliseconds(bytes)
            if let end = audioEnd, ms < end {
                guard end - ms <= Self.audioSlip else {
                    statistics.outOfOrder += 1
                    return nil
                }
                ms = end
            }
        }
        if ms < 0 {
            guard stream == .video else {
                statistics.audioBeforeStart += 1
                return nil
            }
            ms = 0
        }
        if let previous = last[stream.rawValue], ms <= previous {
            // A video frame is never dropped here: the frames after it
            // reference it. It goes 1 ms after the previous one.
            guard stream == .video else {
                statistics.outOfOrder += 1
                return nil
            }
            statistics.videoNudged += 1
            ms = previous + 1
        }
        last[stream.rawValue] = ms
        if stream == .audio { audioEnd = ms + duration }
        return TimedFrame(
            stream: stream, milliseconds: ms, durationMilliseconds: duration, isKeyframe: isKeyframe, bytes: bytes)
    }

    static func opusMilliseconds(_ bytes: [UInt8]) -> Int64 {
        let toc = bytes.withUnsafeBytes { try? OpusTOC(parsing: RawSpan(_unsafeBytes: $0)) }
        guard let toc else { return 20 }
        return Int64(max(1, (toc.frameDurationMicroseconds * toc.frameCount + 500) / 1000))
    }
}

extension Int64 {
    fileprivate func floorDivided(by d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
