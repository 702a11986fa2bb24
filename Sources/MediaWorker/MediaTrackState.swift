import Codecs
import Forwarding
import Negotiation
import RTPStreams
import Rooms
import Wire

/// A published track. Track ids are unique within a room only, so the
/// room is part of the key: two rooms on one worker may both name a
/// track "TR_1".
struct TrackKey: Hashable {
    var room: String
    var trackID: String
}

/// One of a participant's transports. Participant ids are unique
/// server-wide, so the room is implied.
struct TransportKey: Hashable {
    var participant: ParticipantID
    var role: TransportRole
}

/// One forwarding of a track to one subscriber.
struct SubscriptionKey: Hashable {
    var track: TrackKey
    var subscriber: ParticipantID
}

/// An outgoing SSRC on a subscriber's transport: what a PLI or FIR from
/// that subscriber names.
struct OutgoingKey: Hashable {
    var subscriber: ParticipantID
    var ssrc: SSRC
}

/// The codec a payload type stands for on one track.
struct PayloadFormat {
    var codec: MediaCodec
    var clockRate: UInt32
}

/// A track a publisher sends, as the worker recognises and forwards it.
/// A class so that the per-packet path mutates it in place through the
/// routing tables (no copy-on-write of a dictionary value).
final class IncomingTrack {
    let key: TrackKey
    let publisher: ParticipantID
    let description: PublishedTrackDescription
    /// For rid simulcast: the rid forwarded, the last layer of
    /// `a=simulcast` that is not paused (Chromium lists low to high).
    let forwardedRID: RID?
    /// The signalled SSRC of the stream forwarded (for an SSRC-group
    /// simulcast, the last of the SIM group: the highest layer).
    let signalledSSRC: SSRC?
    /// Media payload types; RTX payload types are not in it.
    let formats: [PayloadType: PayloadFormat]
    let retransmissionPayloadTypes: Set<PayloadType>

    /// Statistics of the SSRC being received (replaced when it changes).
    var reception: ReceptionStatistics?
    var keyframeRequests: KeyframeRequestThrottle
    var subscriptions: [Subscription] = []

    init(
        key: TrackKey, publisher: ParticipantID, description: PublishedTrackDescription, senderSSRC: SSRC,
        keyframeInterval: Duration
    ) {
        self.key = key
        self.publisher = publisher
        self.description = description
        let layers = description.simulcast
        forwardedRID = layers.last(where: { !$0.paused })?.rid ?? layers.last?.rid
        if let sources = description.sources {
            signalledSSRC = sources.isSimulcast ? sources.streams.last?.ssrc : sources.streams.first?.ssrc
        } else {
            signalledSSRC = nil
        }
        var formats: [PayloadType: PayloadFormat] = [:]
        var rtx: Set<PayloadType> = []
        for c in description.codecs {
            formats[c.payloadType] = PayloadFormat(codec: c.codec, clockRate: c.clockRate)
            if let r = c.rtxPayloadType { rtx.insert(r) }
        }
        self.formats = formats
        retransmissionPayloadTypes = rtx
        keyframeRequests = KeyframeRequestThrottle(
            senderSSRC: senderSSRC, mediaSSRC: signalledSSRC ?? SSRC(0), interval: keyframeInterval)
    }

    /// The SSRC keyframe requests name: the one last received, else the
    /// signalled one.
    var mediaSSRC: SSRC? { reception?.ssrc ?? signalledSSRC }
}

/// How a publisher transport's packets map to tracks.
final class PublisherRoutes {
    enum Route {
        /// The stream forwarded for this track.
        case forward(IncomingTrack)
        /// Another simulcast layer of the track: not forwarded yet.
        case otherLayer(IncomingTrack)
        /// The track's RTX stream: not forwarded yet.
        case retransmission(IncomingTrack)
    }

    /// Signalled SSRCs, and SSRCs learned from mid/rid extensions (browsers
    /// stop sending the extensions once the SSRC is acknowledged).
    var bySSRC: [SSRC: Route] = [:]
    var byMID: [MID: IncomingTrack] = [:]
    /// Extension ids: one BUNDLE group uses one id per URI across every
    /// m-section (RFC 8285 section 6; `HeaderExtensionIDs`), so the first
    /// track that names one gives it for the transport.
    var midExtensionID: UInt8?
    var ridExtensionID: UInt8?

    var tracks: [IncomingTrack] {
        var seen: [IncomingTrack] = []
        for t in byMID.values where !seen.contains(where: { $0 === t }) { seen.append(t) }
        return seen
    }

    func add(_ track: IncomingTrack) {
        let d = track.description
        byMID[d.mid] = track
        if midExtensionID == nil { midExtensionID = d.headerExtensions.mid }
        if ridExtensionID == nil { ridExtensionID = d.headerExtensions.rtpStreamID }
        guard let sources = d.sources else { return }
        for stream in sources.streams {
            bySSRC[stream.ssrc] = stream.ssrc == track.signalledSSRC ? .forward(track) : .otherLayer(track)
            if let rtx = stream.rtxSSRC { bySSRC[rtx] = .retransmission(track) }
        }
    }

    func remove(_ track: IncomingTrack) {
        if byMID[track.description.mid] === track { byMID[track.description.mid] = nil }
        bySSRC = bySSRC.filter { _, route in
            switch route {
            case .forward(let t), .otherLayer(let t), .retransmission(let t): t !== track
            }
        }
    }
}

/// One track forwarded to one subscriber.
final class Subscription {
    let key: SubscriptionKey
    let outgoingSSRC: SSRC
    /// The publisher's payload type (`PublishedTrackDescription.codecs`
    /// keeps the offer's numbers and the subscriber offer reuses them).
    let payloadType: PayloadType
    /// Nil until the subscriber's transport is open.
    var transportID: TransportID?
    var rewriter: StreamRewriter
    var sendStatistics: SendStatistics
    /// The subscriber's preference (`set-preference`).
    var preference = ReceivePreference()

    var isPaused: Bool { preference.isPaused }

    init(key: SubscriptionKey, outgoing: OutgoingTrack, transportID: TransportID?) {
        self.key = key
        outgoingSSRC = outgoing.ssrc
        payloadType = outgoing.codec.payloadType
        self.transportID = transportID
        rewriter = StreamRewriter(outgoingSSRC: outgoing.ssrc, clockRate: outgoing.codec.clockRate)
        sendStatistics = SendStatistics(ssrc: outgoing.ssrc, clockRate: outgoing.codec.clockRate)
    }
}

/// xorshift64* for the report scheduler's [0.5, 1.5] spread: seeded, so
/// tests are reproducible; the spread only keeps reports apart.
struct ReportJitter: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
