import BotMedia
import Negotiation
import RTP
import Wire

/// The seam where BotMedia plugs in: what a publishing bot sends.
///
/// roombot calls `nextPacket` on the bot loop after its transport is
/// connected, repeatedly until it returns nil, and again at
/// `nextDeadline()`. Each call writes one whole RTP packet (header with the
/// SSRC, payload type and extension ids of `BotMediaPlan`, payload from a
/// real encoder's clip) at the start of `buffer` and returns its length;
/// roombot protects it in place (the buffer has SRTP trailer room) and
/// sends it. Never random bytes: the receivers check what they decode.
protocol BotMediaSource: AnyObject {
    func nextPacket(into buffer: UnsafeMutableRawBufferPointer, now: Instant) -> Int?
    /// When the next packet is due; nil when nothing will be.
    func nextDeadline() -> Instant?
    /// A PLI or FIR from the server for `ssrc` (RFC 4585 section 6.3.1,
    /// RFC 5104 section 4.3.1); returns false for an SSRC it does not send.
    @discardableResult func requestKeyframe(ssrc: SSRC) -> Bool
    /// A generic NACK (RFC 4585 section 6.2.1): answer from history as RTX.
    func retransmit(ssrc: SSRC, sequenceNumbers: [UInt16])
    /// `publisher-layers` (docs/PROTOCOL.md): stop or resume a rid.
    func setActive(rid: RID, _ active: Bool)
}

/// What a media source must put in its packets, from the negotiation.
struct BotMediaPlan {
    var publication: ClientPublication
    var audioPayloadType: PayloadType
    var videoPayloadType: PayloadType
    var videoRTXPayloadType: PayloadType
    /// The extension ids the server accepted, per section kind.
    var audioExtensions: HeaderExtensionIDs?
    var videoExtensions: HeaderExtensionIDs?
    /// The simulcast rids the server takes, lowest first.
    var videoRIDs: [RID]
    var audioMID: MID?
    var videoMID: MID?
}

/// The other half of the seam: what a subscribing bot does with each
/// decrypted RTP packet beyond the statistics roombot keeps itself
/// (BotMedia's frame checks: end-to-end delay, freezes, layer switches).
protocol BotMediaSink: AnyObject {
    func received(_ packet: UnsafeRawBufferPointer, header: RTPHeader, track: AnnouncedTrack, now: Instant) -> SinkFeedback
    /// The subscriber asked for a layer of `height` lines (`set-preference`).
    func switchRequested(height: UInt16, at now: Instant)
    /// An SR for this track: NTP and RTP time of the same instant.
    func senderReport(ntp: UInt64, rtpTimestamp: UInt32)
    var figures: SinkFigures { get }
    /// Gaps between frames shown (video), to count a freeze still going on
    /// at the end of the run; nil where the sink has no frames.
    var freezes: FreezeDetector? { get }
}

extension BotMediaSink {
    func switchRequested(height: UInt16, at now: Instant) {}
    func senderReport(ntp: UInt64, rtpTimestamp: UInt32) {}
    var freezes: FreezeDetector? { nil }
}

/// What a sink asks the bot to do after a packet: a browser sends a PLI
/// when it cannot decode a frame.
enum SinkFeedback { case none, keyframeNeeded }

/// What one sink measured, for the report.
struct SinkFigures {
    var kind: String
    var firstFrameAt: Instant?
    var delay: LatencySamples
    var decodeErrors: Int
    var frames: Int
    var keyframes = 0
    var framesIncomplete = 0
    var framesUndecodable = 0
    var switches = 0
    var switchesNotOnKeyframe = 0
    var resolutionChanges = 0
    var freezeCount = 0
    var freezeDuration: Duration = .zero
    var switchTimes = LatencySamples(capacity: 1)
    var switchesUnfinished = 0
    var height: Int?
}

/// Builds the sources and sinks; `NoMedia` until BotMedia lands, so the
/// control path (joins, transports, offers) is measured on its own.
protocol BotMediaFactory {
    func makeSource(for plan: BotMediaPlan, seed: UInt64, now: Instant) -> BotMediaSource?
    /// `absCaptureTimeID`: the id the subscriber offer maps to
    /// abs-capture-time for this track's mid (the server copies the
    /// publisher's extension under it), nil when it offers none.
    func makeSink(for track: AnnouncedTrack, absCaptureTimeID: UInt8?) -> BotMediaSink?
}

struct NoMedia: BotMediaFactory {
    func makeSource(for plan: BotMediaPlan, seed: UInt64, now: Instant) -> BotMediaSource? { nil }
    func makeSink(for track: AnnouncedTrack, absCaptureTimeID: UInt8?) -> BotMediaSink? { nil }
}
