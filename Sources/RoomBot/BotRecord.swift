import BotMedia
import Negotiation
import PeerSession
import RTP
import RTPStreams
import Wire

/// One received track's statistics (RFC 3550 appendix A.3 and A.8 through
/// ReceptionStatistics), byte count for its bitrate, and the gaps between
/// its packets: a track that stops delivering is stalled from its last
/// packet on, whether or not another packet ever comes.
struct TrackStats {
    var track: AnnouncedTrack
    /// Reception statistics for our RRs and the report, and NACKs for what
    /// video lost: the composition the server uses for its publishers.
    var stream: ReceivedRTPStream
    var bytes: UInt64 = 0
    var firstPacketAt: Instant?
    var lastPacketAt: Instant?
    /// Packet arrival gaps. 500 ms is above a DTX audio track's longest
    /// normal gap (a comfort-noise packet every 400 ms, AudioClip) and a
    /// base-layer video track's (133 ms at 7.5 fps).
    var gaps = FreezeDetector(threshold: .milliseconds(500))
    /// When the track left the subscriber offer (its publisher left, or
    /// unpublished): its silence after that is no stall.
    var endedAt: Instant?
    /// Light subscribers: end-to-end delay per packet from abs-capture-time
    /// (sinks measure it per frame otherwise).
    var delay: LatencySamples?
    /// Light subscribers: the abs-capture-time id of the track's mid.
    var captureTimeID: UInt8?

    /// `repairsLoss`: NACK the track's gaps (video, and not a light
    /// subscriber: it decodes nothing, so it repairs nothing).
    init(track: AnnouncedTrack, ssrc: SSRC, repairsLoss: Bool = false) {
        self.track = track
        stream = ReceivedRTPStream(ssrc: ssrc, clockRate: track.codec.clockRate, repairsLoss: repairsLoss)
    }

    var reception: ReceptionStatistics { stream.reception }

    mutating func packet(bytes count: Int, at arrival: Instant) {
        bytes &+= UInt64(count)
        if firstPacketAt == nil { firstPacketAt = arrival }
        lastPacketAt = arrival
        gaps.frame(at: arrival)
        endedAt = nil
    }

    /// Where measuring this track stops: the run's end, or earlier when the
    /// track was withdrawn.
    func measuredEnd(_ end: Instant) -> Instant { endedAt.map { min($0, end) } ?? end }

    /// Mean bitrate from the first packet to `end` (the end of the run), in
    /// bits/s: a stall lowers it, as it lowers what a viewer gets.
    func bitsPerSecond(until end: Instant) -> Double {
        guard let first = firstPacketAt else { return 0 }
        let stop = measuredEnd(end)
        guard stop > first else { return 0 }
        return Double(bytes * 8) / (Double((stop - first).nanoseconds) / 1e9)
    }

    /// Packet gaps with the one in progress closed at `end`.
    func gaps(until end: Instant) -> FreezeDetector { gaps.measured(until: measuredEnd(end)) }

    /// Whether a packet arrived within `window` before `now`.
    func isFlowing(at now: Instant, window: Duration) -> Bool {
        guard let last = lastPacketAt, endedAt == nil else { return false }
        return now - last <= window
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
    /// RTP this bot sent (publishers, participants): packets and bytes
    /// before SRTP (as received bytes are counted after it), and the
    /// first send, from which the send rate is measured.
    /// `--data-rate`: messages sent to the room, messages received from
    /// other bots, and each received one's latency (bots share the
    /// process's clock, so the send time in the message is comparable).
    var dataSent = 0
    var dataReceived = 0
    var dataLatencyMilliseconds: [Double] = []
    var dataChannelOpen = false
    var packetsSent: UInt64 = 0
    var bytesSent: UInt64 = 0
    var firstSentAt: Instant?
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
    /// transport-cc feedback packets sent on the subscriber transport.
    var transportFeedbackSent = 0
    var retransmissionsReceived = 0
    var keyframeRequestsReceived = 0
    var nacksReceived = 0
    var errors: [String: Int] = [:]
    /// The first detail seen per error kind (errno text, HTTP status,
    /// close code), for the reasons a run failed.
    var errorDetails: [String: String] = [:]
    /// Live state for the progress line: the transports this role depends
    /// on are connected now, and (room protocol) its WebSocket is open.
    var transportUp = false
    var signalingUp = false
    /// Gave up connecting (`--connect-timeout` passed): nothing more to do.
    var gaveUp = false
    /// `--light`: RTP counted from its header alone, not decrypted.
    var light = false
    /// Which `--url` this bot connects to (`BotOptions.servers`).
    let serverIndex: Int
    /// Times the room WebSocket dropped (a close the bot did not start)
    /// and was opened and joined again, the server resuming the
    /// participant (`Bot+Connect.swift`).
    var reconnects = 0
    /// Times it was joined again as a new participant (`resumed: false`:
    /// the room's node died and the room was placed on another one, or the
    /// server forgot the participant), and the bot negotiated afresh
    /// (`Bot+Rejoin.swift`). Disjoint from `reconnects`.
    var rejoins = 0
    /// The drop a rejoin recovers from, until the first frame after it.
    var recoveringSince: Instant?
    /// Per rejoin that brought media back: from the drop to the first frame
    /// received after it (the first packet without sinks; a bot with
    /// nothing to receive: its first packet sent on the new transport).
    var recoveryMilliseconds: [Double] = []
    /// What was received before each rejoin, closed at the drop: its
    /// silence after it is the recovery, not a stall.
    var earlierSessions: [ReceivedSession] = []
    /// Their bytes, packets and loss summed, so that running totals (the
    /// progress line's deltas) never go back at a rejoin.
    var earlierTotals: (bytes: UInt64, packets: UInt64, lost: Int64) = (0, 0, 0)

    init(role: BotRole, room: String, identity: String, serverIndex: Int = 0) {
        self.role = role
        self.room = room
        self.identity = identity
        self.serverIndex = serverIndex
    }

    func error(_ kind: String, _ detail: String? = nil) {
        errors[kind, default: 0] += 1
        if let detail, errorDetails[kind] == nil { errorDetails[kind] = detail }
    }

    func milliseconds(_ from: Instant?, _ to: Instant?) -> Double? {
        guard let from, let to else { return nil }
        return Double((to - from).nanoseconds) / 1e6
    }

    var joinMilliseconds: Double? { milliseconds(startedAt, joinedAt) }
    /// A participant needs its subscriber transport once it has something
    /// to receive: tracks expected, or an offer it answered. One alone in
    /// its room (another process may add the others) is never offered any.
    var needsSubscriber: Bool {
        role.subscribes && (role == .subscriber || tracksExpected > 0 || subscriberOffersAnswered > 0)
    }

    /// Whether the transports this role depends on are connected (nil: not
    /// opened yet).
    func transportsUp(publisher: Bool?, subscriber: Bool?) -> Bool {
        (!role.publishes || publisher == true) && (!needsSubscriber || subscriber == true)
    }

    /// Join to the transports this role depends on being connected (a
    /// participant: the later of its two).
    var connectMilliseconds: Double? {
        var at: Instant?
        if role.publishes {
            guard let p = publisherConnectedAt else { return nil }
            at = p
        }
        if needsSubscriber {
            guard let s = subscriberConnectedAt else { return nil }
            at = max(at ?? s, s)
        }
        return milliseconds(joinedAt, at)
    }
    /// Join to the first complete decodable video frame (or first audio
    /// packet in audio-only runs); without media sinks, the first packet.
    /// The first join's: a rejoin's is its recovery.
    var firstFrameMilliseconds: Double? {
        let all = sessions.flatMap(\.sinks.values)
        if all.isEmpty { return milliseconds(joinedAt, firstMediaAt) }
        let video = all.map(\.figures).filter { $0.kind == "video" }.compactMap(\.firstFrameAt)
        let audio = all.map(\.figures).compactMap(\.firstFrameAt)
        return milliseconds(joinedAt, (video.isEmpty ? audio : video).min())
    }
    var isConnected: Bool {
        transportsUp(publisher: publisherConnectedAt != nil, subscriber: subscriberConnectedAt != nil)
    }

    func sent(bytes: Int, at now: Instant) {
        packetsSent &+= 1
        bytesSent &+= UInt64(bytes)
        if firstSentAt == nil { firstSentAt = now }
    }

    /// Mean send rate from the first packet sent to `end`, bits/s.
    func sentBitsPerSecond(until end: Instant) -> Double {
        guard let first = firstSentAt, end > first else { return 0 }
        return Double(bytesSent * 8) / (Double((end - first).nanoseconds) / 1e9)
    }
    /// Every session's received media, the current one last.
    var sessions: [ReceivedSession] { earlierSessions + [ReceivedSession(tracks: tracks, sinks: sinks)] }
    /// Every track received during the run, before and after rejoins.
    var allTracks: [TrackStats] { sessions.flatMap(\.tracks.values) }

    /// A rejoin: what was received so far is closed at the drop, and the
    /// recovery is timed from it (from the first drop while a recovery is
    /// still open).
    func startOver(droppedAt: Instant) {
        var closed = tracks
        for (ssrc, t) in tracks { closed[ssrc]?.endedAt = min(t.endedAt ?? droppedAt, droppedAt) }
        earlierSessions.append(ReceivedSession(tracks: closed, sinks: sinks, endedAt: droppedAt))
        for t in tracks.values {
            earlierTotals.bytes &+= t.bytes
            earlierTotals.packets &+= t.reception.packetsReceived
            earlierTotals.lost += max(t.reception.cumulativeLost, 0)
        }
        tracks = [:]
        sinks = [:]
        tracksAnnounced = 0
        forwardedLayer = [:]
        rejoins += 1
        recoveringSince = recoveringSince ?? droppedAt
    }

    /// Media again after a rejoin, at `at`.
    func recovered(at: Instant) {
        guard let since = recoveringSince else { return }
        recoveringSince = nil
        recoveryMilliseconds.append(Double((at - since).nanoseconds) / 1e6)
    }

    /// Tracks of the current session that delivered at least one packet
    /// (a rejoin's tracks must flow again: the earlier ones do not count).
    var tracksFlowing: Int { tracks.values.filter { $0.reception.packetsReceived > 0 }.count }
    /// Tracks with a packet in the last `window`: drops when media stops.
    func tracksFlowing(at now: Instant, window: Duration) -> Int {
        tracks.values.filter { $0.isFlowing(at: now, window: window) }.count
    }
    /// Connected now and, over the room WebSocket, still in the room.
    var isUp: Bool { transportUp && (signalingUp || usesHTTP) }
    var usesHTTP = false
}

/// What one bot received between two rejoins: its tracks and their sinks,
/// and (when a rejoin closed it) the drop that ended it.
struct ReceivedSession {
    var tracks: [SSRC: TrackStats]
    var sinks: [SSRC: BotMediaSink]
    var endedAt: Instant?

    /// Where the session's measuring stops: the run's end, or its drop.
    func measuredEnd(_ end: Instant) -> Instant { endedAt.map { min($0, end) } ?? end }
}
