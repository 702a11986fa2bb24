import Negotiation
import RTP
import RTPStreams
import Wire

/// One received track's statistics (RFC 3550 appendix A.3 and A.8 through
/// ReceptionStatistics) and byte count for its bitrate.
struct TrackStats {
    var track: AnnouncedTrack
    var reception: ReceptionStatistics
    var bytes: UInt64 = 0
    var firstPacketAt: Instant?
    var lastPacketAt: Instant?

    init(track: AnnouncedTrack, ssrc: SSRC) {
        self.track = track
        reception = ReceptionStatistics(ssrc: ssrc, clockRate: track.codec.clockRate)
    }

    /// Mean bitrate between the first and the last packet, bits/s.
    var bitsPerSecond: Double {
        guard let first = firstPacketAt, let last = lastPacketAt, last > first else { return 0 }
        return Double(bytes * 8) / (Double((last - first).nanoseconds) / 1e9)
    }
}

/// What one bot measured, kept for the progress line and the summary.
final class BotRecord {
    let role: BotRole
    let room: String
    let identity: String
    var startedAt: Instant?
    var joinedAt: Instant?
    var publishAnsweredAt: Instant?
    var publisherConnectedAt: Instant?
    var subscriberConnectedAt: Instant?
    var firstMediaAt: Instant?
    /// Tracks the latest subscriber offer announced (sending sections).
    var tracksAnnounced = 0
    var tracksPublished = 0
    var subscriberOffersAnswered = 0
    /// WHEP offers refused with 409 (nothing published yet) and posted again.
    var retries = 0
    /// Tracks this bot should be offered: every publisher's (room protocol)
    /// or one publisher's (WHEP plays the room's first publisher).
    var tracksExpected = 0
    var tracks: [SSRC: TrackStats] = [:]
    var rttMilliseconds: [Double] = []
    /// BotMedia's checks per received SSRC.
    var sinks: [SSRC: BotMediaSink] = [:]
    var streamStates = 0
    /// trackId -> the layer the last `stream-state` named (nil: paused).
    var forwardedLayer: [String: Int?] = [:]
    var publisherLayerMessages = 0
    var activeSpeakerMessages = 0
    var switchesRequested = 0
    var nacksSent = 0
    var packetsNacked = 0
    var plisSent = 0
    var retransmissionsReceived = 0
    var keyframeRequestsReceived = 0
    var nacksReceived = 0
    var errors: [String: Int] = [:]

    init(role: BotRole, room: String, identity: String) {
        self.role = role
        self.room = room
        self.identity = identity
    }

    func error(_ kind: String) { errors[kind, default: 0] += 1 }

    func milliseconds(_ from: Instant?, _ to: Instant?) -> Double? {
        guard let from, let to else { return nil }
        return Double((to - from).nanoseconds) / 1e6
    }

    var joinMilliseconds: Double? { milliseconds(startedAt, joinedAt) }
    /// Join to the transport this role depends on being connected.
    var connectMilliseconds: Double? {
        milliseconds(joinedAt, role == .publisher ? publisherConnectedAt : subscriberConnectedAt)
    }
    /// Join to the first complete decodable video frame (or first audio
    /// packet in audio-only runs); without media sinks, the first packet.
    var firstFrameMilliseconds: Double? {
        if sinks.isEmpty { return milliseconds(joinedAt, firstMediaAt) }
        let video = sinks.values.map(\.figures).filter { $0.kind == "video" }.compactMap(\.firstFrameAt)
        let audio = sinks.values.map(\.figures).compactMap(\.firstFrameAt)
        return milliseconds(joinedAt, (video.isEmpty ? audio : video).min())
    }
    var isConnected: Bool { role == .publisher ? publisherConnectedAt != nil : subscriberConnectedAt != nil }
    var tracksFlowing: Int { tracks.values.filter { $0.reception.packetsReceived > 0 }.count }
}
