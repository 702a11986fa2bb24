import RTP
import Wire

/// What a subscribing bot checks on one received video track, the way a
/// browser would see it: frames complete and decodable (`VP8FrameAssembler`),
/// freezes (`FreezeDetector`), end-to-end delay from abs-capture-time
/// (`NTPClock`), time to first frame, and how long a requested layer
/// switch took to show its first complete frame at the new resolution.
public struct VideoTrackReceiver: Sendable {
    public private(set) var assembler: VP8FrameAssembler
    public private(set) var freezes = FreezeDetector()
    public private(set) var delay = LatencySamples(capacity: 2048)
    public private(set) var switchTimes = LatencySamples(capacity: 256)
    public private(set) var firstFrameAt: Instant?
    /// Resolution changes seen in complete decodable frames.
    public private(set) var resolutionChanges = 0
    /// The requested switches that never showed the wanted resolution
    /// before the next request.
    public private(set) var switchesUnfinished = 0
    public let clock: NTPClock
    private var pendingSwitch: (height: UInt16, since: Instant)?
    /// The latest sender report's NTP and RTP time (RFC 3550 section
    /// 6.4.1), the fallback for frames without abs-capture-time.
    private var senderReport: (ntp: UInt64, rtpTimestamp: UInt32)?
    public let clockRate: UInt32 = 90_000

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
    private var lastHeight: UInt16?

    public init(absCaptureTimeID: UInt8?, clock: NTPClock) {
        assembler = VP8FrameAssembler(absCaptureTimeID: absCaptureTimeID)
        self.clock = clock
    }

    /// A switch to a layer of `height` lines was requested at `now`.
    public mutating func switchRequested(height: UInt16, at now: Instant) {
        if pendingSwitch != nil { switchesUnfinished += 1 }
        pendingSwitch = lastHeight == height ? nil : (height, now)
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
                shown(frame, arrival: arrival)
                last = frame
            }
            next = assembler.nextFrame()
        }
        return last
    }

    private mutating func shown(_ frame: VP8FrameAssembler.Frame, arrival: Instant) {
        if firstFrameAt == nil { firstFrameAt = arrival }
        freezes.frame(at: arrival)
        if let ntp = frame.captureTime ?? captureTime(rtpTimestamp: frame.rtpTimestamp),
            let d = clock.elapsed(since: ntp, at: arrival)
        {
            delay.record(d)
        }
        if let h = frame.height {
            if let last = lastHeight, last != h { resolutionChanges += 1 }
            lastHeight = h
            if let p = pendingSwitch, p.height == h {
                switchTimes.record(arrival - p.since)
                pendingSwitch = nil
            }
        }
    }

    /// Whether the last frame handed out was undecodable; the statistics
    /// say how many.
    public var undecodableFrames: Int { assembler.statistics.framesUndecodable }
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
