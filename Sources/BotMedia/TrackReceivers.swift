import RTP
import Wire

/// What a subscribing bot checks in the frames one video track shows,
/// whatever the codec: freezes (`FreezeDetector`), end-to-end delay from
/// abs-capture-time (`NTPClock`, falling back to the SR mapping), time to
/// first frame, resolution changes, and how long a requested layer switch
/// took to show its first frame at the new resolution.
public struct VideoFrameTimeline: Sendable {
    public private(set) var freezes = FreezeDetector()
    public private(set) var delay = LatencySamples(capacity: 2048)
    public private(set) var switchTimes = LatencySamples(capacity: 256)
    public private(set) var firstFrameAt: Instant?
    /// Resolution changes seen in frames shown.
    public private(set) var resolutionChanges = 0
    /// The requested switches that never showed the wanted resolution
    /// before the next request.
    public private(set) var switchesUnfinished = 0
    public let clock: NTPClock
    private var pendingSwitch: (height: UInt16, since: Instant)?
    /// The latest sender report's NTP and RTP time (RFC 3550 section
    /// 6.4.1), the fallback for frames without abs-capture-time.
    private var senderReport: (ntp: UInt64, rtpTimestamp: UInt32)?
    private var lastHeight: UInt16?
    public let clockRate: UInt32 = 90_000

    public init(clock: NTPClock) { self.clock = clock }

    /// A sender report for this track arrived (the SFU re-bases the
    /// publisher's onto the forwarded timestamps).
    public mutating func senderReport(ntp: UInt64, rtpTimestamp: UInt32) {
        senderReport = (ntp, rtpTimestamp)
    }

    /// The NTP time a frame's RTP timestamp stands for, from the last SR.
    func captureTime(rtpTimestamp: UInt32) -> UInt64? {
        guard let sr = senderReport else { return nil }
        let ticks = Int64(Int32(bitPattern: rtpTimestamp &- sr.rtpTimestamp))
        let offset = (ticks << 32) / Int64(clockRate)
        return sr.ntp &+ UInt64(bitPattern: offset)
    }

    /// A switch to a layer of `height` lines was requested at `now`.
    public mutating func switchRequested(height: UInt16, at now: Instant) {
        if pendingSwitch != nil { switchesUnfinished += 1 }
        pendingSwitch = lastHeight == height ? nil : (height, now)
    }

    /// A frame was shown at `arrival`; `height` when known (a VP8 keyframe
    /// header, a decoded H.264 picture).
    public mutating func shown(rtpTimestamp: UInt32, captureTime: UInt64?, height: UInt16?, arrival: Instant) {
        if firstFrameAt == nil { firstFrameAt = arrival }
        freezes.frame(at: arrival)
        if let ntp = captureTime ?? self.captureTime(rtpTimestamp: rtpTimestamp),
            let d = clock.elapsed(since: ntp, at: arrival)
        {
            delay.record(d)
        }
        if let h = height {
            if let last = lastHeight, last != h { resolutionChanges += 1 }
            lastHeight = h
            if let p = pendingSwitch, p.height == h {
                switchTimes.record(arrival - p.since)
                pendingSwitch = nil
            }
        }
    }
}

/// What a subscribing bot checks on one received VP8 track, the way a
/// browser would see it: frames complete and decodable
/// (`VP8FrameAssembler`), and in those the `VideoFrameTimeline` checks.
public struct VideoTrackReceiver: Sendable {
    public private(set) var assembler: VP8FrameAssembler
    public private(set) var timeline: VideoFrameTimeline
    public var freezes: FreezeDetector { timeline.freezes }
    public var delay: LatencySamples { timeline.delay }
    public var switchTimes: LatencySamples { timeline.switchTimes }
    public var firstFrameAt: Instant? { timeline.firstFrameAt }
    public var resolutionChanges: Int { timeline.resolutionChanges }
    public var switchesUnfinished: Int { timeline.switchesUnfinished }
    public var clock: NTPClock { timeline.clock }

    public init(absCaptureTimeID: UInt8?, clock: NTPClock) {
        assembler = VP8FrameAssembler(absCaptureTimeID: absCaptureTimeID)
        timeline = VideoFrameTimeline(clock: clock)
    }

    public mutating func senderReport(ntp: UInt64, rtpTimestamp: UInt32) {
        timeline.senderReport(ntp: ntp, rtpTimestamp: rtpTimestamp)
    }

    /// A switch to a layer of `height` lines was requested at `now`.
    public mutating func switchRequested(height: UInt16, at now: Instant) {
        timeline.switchRequested(height: height, at: now)
    }

    /// Feeds one RTP packet; returns the last decodable frame it released
    /// (a late packet can release several; undecodable ones show in
    /// `undecodableFrames`, so the caller can ask for a keyframe).
    @discardableResult
    public mutating func handle(_ header: RTPHeader, packet: RawSpan, arrival: Instant) -> VP8FrameAssembler.Frame? {
        var last: VP8FrameAssembler.Frame?
        var next = assembler.handle(header, packet: packet, arrival: arrival)
        while let frame = next {
            if frame.isDecodable {
                timeline.shown(
                    rtpTimestamp: frame.rtpTimestamp, captureTime: frame.captureTime, height: frame.height,
                    arrival: arrival)
                last = frame
            }
            next = assembler.nextFrame()
        }
        return last
    }

    /// Whether the last frame handed out was undecodable; the statistics
    /// say how many.
    public var undecodableFrames: Int { assembler.statistics.framesUndecodable }
}

/// What a subscribing bot checks on one received H.264 track: access
/// units rebuilt from RTP (`H264FrameAssembler`), every decodable one
/// decoded with libopenh264 (`H264Decoder`, which gives the picture size,
/// so a subscriber sees which simulcast layer it gets), and in the
/// decoded frames the `VideoFrameTimeline` checks. A class because it
/// owns the decoder handle.
public final class H264TrackReceiver {
    public private(set) var assembler: H264FrameAssembler
    public private(set) var timeline: VideoFrameTimeline
    private var decoder: H264Decoder
    /// Frames the decoder rejected (then a refresh is awaited).
    public private(set) var decodeErrors = 0
    public private(set) var framesDecoded = 0
    /// The size of the last decoded picture.
    public private(set) var resolution: (width: Int, height: Int)?

    public init(absCaptureTimeID: UInt8?, clock: NTPClock) throws(BotMediaError) {
        assembler = H264FrameAssembler(absCaptureTimeID: absCaptureTimeID)
        timeline = VideoFrameTimeline(clock: clock)
        decoder = try H264Decoder()
    }

    public func senderReport(ntp: UInt64, rtpTimestamp: UInt32) {
        timeline.senderReport(ntp: ntp, rtpTimestamp: rtpTimestamp)
    }

    public func switchRequested(height: UInt16, at now: Instant) {
        timeline.switchRequested(height: height, at: now)
    }

    /// Feeds one RTP packet; returns the frame it completed when that
    /// frame decoded. A frame that could not be decoded (references lost,
    /// or rejected by the decoder) shows in `undecodableFrames`, so the
    /// caller can ask for a keyframe.
    @discardableResult
    public func handle(_ header: RTPHeader, packet: RawSpan, arrival: Instant) -> H264FrameAssembler.Frame? {
        guard let frame = assembler.handle(header, packet: packet, arrival: arrival), frame.isDecodable else {
            return nil
        }
        let size: (width: Int, height: Int)?
        do {
            size = try assembler.frameBuffer.withUnsafeBytes { bytes throws(BotMediaError) in
                try decoder.decode(RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: bytes[0..<frame.byteCount])))
            }
        } catch {
            decodeErrors += 1
            assembler.decoderFailed()
            return nil
        }
        framesDecoded += 1
        if let size { resolution = size }
        timeline.shown(
            rtpTimestamp: frame.rtpTimestamp, captureTime: frame.captureTime,
            height: size.map { UInt16(clamping: $0.height) }, arrival: arrival)
        return frame
    }

    /// Frames that could not be decoded: lost references or decoder errors.
    public var undecodableFrames: Int { assembler.statistics.framesUndecodable + decodeErrors }
}

/// What a subscribing bot checks on one received audio track: every
/// payload decodes (`OpusStreamChecker`), first packet time, and
/// end-to-end delay from abs-capture-time when the packet carries it.
public final class AudioTrackReceiver {
    public private(set) var checker: OpusStreamChecker
    public private(set) var delay = LatencySamples(capacity: 2048)
    public private(set) var firstPacketAt: Instant?
    public let absCaptureTimeID: UInt8?
    public let clock: NTPClock

    public init(absCaptureTimeID: UInt8?, clock: NTPClock) throws(BotMediaError) {
        checker = try OpusStreamChecker()
        self.absCaptureTimeID = absCaptureTimeID
        self.clock = clock
    }

    public func handle(_ header: RTPHeader, packet: RawSpan, arrival: Instant) {
        if firstPacketAt == nil { firstPacketAt = arrival }
        checker.handle(header, packet: packet)
        guard let id = absCaptureTimeID, let range = header.extensionValueRange(id: id, in: packet),
            range.count >= 8, range.upperBound <= packet.byteCount
        else { return }
        var reader = ByteReader(packet, offset: range.lowerBound)
        guard let ntp = try? reader.uint64(or: BotMediaError.truncated) else { return }
        if let d = clock.elapsed(since: ntp, at: arrival) { delay.record(d) }
    }
}
