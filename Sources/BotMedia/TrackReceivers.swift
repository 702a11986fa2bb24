import RTP
import Wire

/// What a subscribing bot checks in the frames one video track shows,
/// whatever the codec: freezes (`FreezeDetector`), end-to-end delay from
/// abs-capture-time (`NTPClock`, falling back to the SR mapping), time to
/// first frame, resolution changes, and how long a requested layer switch
/// took to show its first frame at the new resolution.
package struct VideoFrameTimeline: Sendable {
    package private(set) var freezes = FreezeDetector()
    package private(set) var delay = LatencySamples(capacity: 2048)
    package private(set) var switchTimes = LatencySamples(capacity: 256)
    package private(set) var firstFrameAt: Instant?
    /// Resolution changes seen in frames shown.
    package private(set) var resolutionChanges = 0
    /// The requested switches that never showed the wanted resolution
    /// before the next request.
    package private(set) var switchesUnfinished = 0
    package let clock: NTPClock
    private var pendingSwitch: (height: UInt16, since: Instant)?
    /// The latest sender report's NTP and RTP time (RFC 3550 section
    /// 6.4.1), the fallback for frames without abs-capture-time.
    private var senderReport: (ntp: UInt64, rtpTimestamp: UInt32)?
    private var lastHeight: UInt16?
    package let clockRate: UInt32 = 90_000

    package init(clock: NTPClock) { self.clock = clock }

    /// A sender report for this track arrived (the SFU re-bases the
    /// publisher's onto the forwarded timestamps).
    package mutating func senderReport(ntp: UInt64, rtpTimestamp: UInt32) {
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
    package mutating func switchRequested(height: UInt16, at now: Instant) {
        if pendingSwitch != nil { switchesUnfinished += 1 }
        pendingSwitch = lastHeight == height ? nil : (height, now)
    }

    /// A frame was shown at `arrival`; `height` when known (a VP8 keyframe
    /// header, a decoded H.264 picture).
    package mutating func shown(rtpTimestamp: UInt32, captureTime: UInt64?, height: UInt16?, arrival: Instant) {
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
package struct VideoTrackReceiver: Sendable {
    package private(set) var assembler: VP8FrameAssembler
    package private(set) var timeline: VideoFrameTimeline
    package var freezes: FreezeDetector { timeline.freezes }
    package var delay: LatencySamples { timeline.delay }
    package var switchTimes: LatencySamples { timeline.switchTimes }
    package var firstFrameAt: Instant? { timeline.firstFrameAt }
    package var resolutionChanges: Int { timeline.resolutionChanges }
    package var switchesUnfinished: Int { timeline.switchesUnfinished }
    package var clock: NTPClock { timeline.clock }

    package init(absCaptureTimeID: UInt8?, clock: NTPClock) {
        assembler = VP8FrameAssembler(absCaptureTimeID: absCaptureTimeID)
        timeline = VideoFrameTimeline(clock: clock)
    }

    package mutating func senderReport(ntp: UInt64, rtpTimestamp: UInt32) {
        timeline.senderReport(ntp: ntp, rtpTimestamp: rtpTimestamp)
    }

    /// A switch to a layer of `height` lines was requested at `now`.
    package mutating func switchRequested(height: UInt16, at now: Instant) {
        timeline.switchRequested(height: height, at: now)
    }

    /// Feeds one RTP packet; returns the last decodable frame it released
    /// (a late packet can release several; undecodable ones show in
    /// `undecodableFrames`, so the caller can ask for a keyframe).
    @discardableResult
    package mutating func handle(_ header: RTPHeader, packet: RawSpan, arrival: Instant) -> VP8FrameAssembler.Frame? {
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
    package var undecodableFrames: Int { assembler.statistics.framesUndecodable }
}

/// What a subscribing bot checks on one received H.264 track: access
/// units rebuilt from RTP (`H264FrameAssembler`), every decodable one
/// decoded with libopenh264 (`H264Decoder`, which gives the picture size,
/// so a subscriber sees which simulcast layer it gets), and in the
/// decoded frames the `VideoFrameTimeline` checks. A class because it
/// owns the decoder handle.
package final class H264TrackReceiver {
    package private(set) var assembler: H264FrameAssembler
    package private(set) var timeline: VideoFrameTimeline
    private var decoder: H264Decoder
    /// Frames the decoder rejected (then a refresh is awaited).
    package private(set) var decodeErrors = 0
    package private(set) var framesDecoded = 0
    /// The size of the last decoded picture.
    package private(set) var resolution: (width: Int, height: Int)?

    package init(absCaptureTimeID: UInt8?, clock: NTPClock) throws(BotMediaError) {
        assembler = H264FrameAssembler(absCaptureTimeID: absCaptureTimeID)
        timeline = VideoFrameTimeline(clock: clock)
        decoder = try H264Decoder()
    }

    package func senderReport(ntp: UInt64, rtpTimestamp: UInt32) {
        timeline.senderReport(ntp: ntp, rtpTimestamp: rtpTimestamp)
    }

    package func switchRequested(height: UInt16, at now: Instant) {
        timeline.switchRequested(height: height, at: now)
    }

    /// Feeds one RTP packet; returns the frame it completed when that
    /// frame decoded. A frame that could not be decoded (references lost,
    /// or rejected by the decoder) shows in `undecodableFrames`, so the
    /// caller can ask for a keyframe.
    @discardableResult
    package func handle(_ header: RTPHeader, packet: RawSpan, arrival: Instant) -> H264FrameAssembler.Frame? {
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
    package var undecodableFrames: Int { assembler.statistics.framesUndecodable + decodeErrors }
}

/// What a subscribing bot checks on one received audio track: every
/// payload decodes (`OpusStreamChecker`), first packet time, and
/// end-to-end delay from abs-capture-time when the packet carries it.
package final class AudioTrackReceiver {
    package private(set) var checker: OpusStreamChecker
    package private(set) var delay = LatencySamples(capacity: 2048)
    package private(set) var firstPacketAt: Instant?
    package let absCaptureTimeID: UInt8?
    package let clock: NTPClock

    package init(absCaptureTimeID: UInt8?, clock: NTPClock) throws(BotMediaError) {
        checker = try OpusStreamChecker()
        self.absCaptureTimeID = absCaptureTimeID
        self.clock = clock
    }

    package func handle(_ header: RTPHeader, packet: RawSpan, arrival: Instant) {
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
