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
    func received(_ packet: UnsafeRawBufferPointer, header: RTPHeader, track: AnnouncedTrack, now: Instant)
}

/// Builds the sources and sinks; `NoMedia` until BotMedia lands, so the
/// control path (joins, transports, offers) is measured on its own.
protocol BotMediaFactory {
    func makeSource(for plan: BotMediaPlan) -> BotMediaSource?
    func makeSink(for track: AnnouncedTrack) -> BotMediaSink?
}

struct NoMedia: BotMediaFactory {
    func makeSource(for plan: BotMediaPlan) -> BotMediaSource? { nil }
    func makeSink(for track: AnnouncedTrack) -> BotMediaSink? { nil }
}
