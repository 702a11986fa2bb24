import BandwidthEstimation
import Codecs
import Forwarding
import LossRecovery
import Negotiation
import PeerSession
import RTPStreams
import RoomProtocol
import Rooms
import Wire
import WorkerRelay

/// A published track. Track ids are unique within a room only, so the
/// room is part of the key: two rooms on one worker may both name a
/// track "TR_1".
struct TrackKey: Hashable {
    var room: String
    var trackID: String
}

/// One of a participant's transports. Participant ids are unique
/// server-wide, so the room is implied.
struct TransportKey: Hashable, Sendable {
    var participant: ParticipantID
    var role: TransportRole
}

/// One forwarding of a track to one subscriber.
struct SubscriptionKey: Hashable {
    var track: TrackKey
    var subscriber: ParticipantID
}

/// An outgoing SSRC on a subscriber transport: what that subscriber's
/// RTCP (a receiver report block, a NACK, a PLI or FIR) names. Two
/// integers: no string is hashed per RTCP packet.
struct OutgoingKey: Hashable {
    var transport: TransportID
    var ssrc: SSRC
}

/// The codec a payload type stands for on one track.
struct PayloadFormat {
    var codec: MediaCodec
    var clockRate: UInt32
}

/// One spatial layer (simulcast stream) of an incoming track, as received
/// now. A track without simulcast has one.
struct IncomingLayer {
    /// The rid naming it (rid simulcast), else nil.
    var rid: RID?
    /// The SSRC, signalled or learned from the mid/rid extensions.
    var ssrc: SSRC?
    /// Reception statistics and loss repair of `ssrc` (replaced when it
    /// changes): the composition roombot uses for what it receives too.
    var stream: ReceivedRTPStream?
    var lastArrival: Instant?
    /// From the layer's last keyframe (VP8), else nil.
    var width: Int?
    var height: Int?
    /// The layer's last Sender Report: NTP time (32.32) and RTP timestamp,
    /// to re-base timestamps across layer switches.
    var senderReport: (ntp: UInt64, rtpTimestamp: UInt32)?
    var keyframeRequests: KeyframeRequestThrottle
    /// H.264: a keyframe is an IDR with its SPS and PPS.
    var h264 = H264KeyframeTracker()
}

/// A track a publisher sends, as the worker recognises and forwards it.
/// A class so that the per-packet path mutates it in place through the
/// routing tables (no copy-on-write of a dictionary value).
final class IncomingTrack {
    let key: TrackKey
    let publisher: ParticipantID
    let description: PublishedTrackDescription
    /// Spatial layers, lowest first: for rid simulcast the `a=simulcast`
    /// order (Chromium lists low to high), for SSRC-group simulcast the
    /// `SIM` group order (RFC 5576 section 5: lowest first), else one.
    var layers: [IncomingLayer]
    /// True for rid or SSRC-group simulcast.
    let isSimulcast: Bool
    /// Media payload types; RTX payload types are not in it.
    let formats: [PayloadType: PayloadFormat]
    let retransmissionPayloadTypes: Set<PayloadType>
    /// RTX payload type -> the media payload type it repairs (`apt`).
    let repairedPayloadTypes: [PayloadType: PayloadType]
    /// The publisher's recent packets, for subscribers' NACKs.
    var retransmissions: RetransmissionBuffer
    /// What each layer sends now (bitrate per spatial/temporal layer).
    var bitrates = LayerBitrateMeter()
    /// Audio: the levels since the active-speaker round last looked.
    var audioLevels = AudioLevelWindow()
    /// Dynacast: the layers last announced active to the publisher
    /// (`publisher-layers`), a bit per layer; nil before the first
    /// announcement.
    var announcedLayerMask: UInt8?
    var subscriptions: [Subscription] = []
    /// Muted by `setTrackMuted`: its packets are counted and dropped at
    /// once (`LayerFilter.muted`).
    var isMuted = false
    /// Far side: the worker and relay this track's packets come from
    /// instead of a publisher transport here (nil: the publisher's
    /// transport is on this worker).
    var relaySource: RelayKey?
    /// Far side: what was asked of the source lately (made at the first
    /// upstream NACK).
    var upstreamNACKs: UpstreamNACKMemory?
    /// Source side: the far workers and nodes that get every packet of
    /// the track once each. A relayed track has some only across a node
    /// boundary: one relayed from a worker goes on to nodes, one relayed
    /// from a node goes on to this node's other workers (`addRelaySink`).
    var relaySinks: [RelaySink] = []
    /// Far side: the layer demand last sent to the source (dynacast; nil
    /// before the first), and when.
    var sentLayerDemand: UInt8?
    var sentLayerDemandAt: Instant?
    /// Far side: the source's last measure of every layer's bitrate, and
    /// when it came. The relay carries only the layers this side wants, so
    /// the others cannot be measured here; the allocator prices them by
    /// this (`allocationRates`).
    var reportedBitrates: (rates: RelayedLayerBitrates, at: Instant)?
    /// How long a report stands: three of the source's one-second windows
    /// (a relay that stopped reporting falls back to what arrives here).
    static let reportedBitratesLifetime: Duration = .seconds(3)
    /// SSRCs learned for this track from mid/rid (RFC 8852), not signalled.
    var learnedSSRCs = 0
    /// An m-section has room for one media and one RTX SSRC per layer:
    /// more SSRCs naming its mid are refused (a peer with valid keys could
    /// otherwise grow `PublisherRoutes.bySSRC` with a new SSRC per packet).
    var learnedSSRCLimit: Int { layers.count * 2 }

    init(
        key: TrackKey, publisher: ParticipantID, description: PublishedTrackDescription, senderSSRC: SSRC,
        keyframeInterval: Duration
    ) {
        self.key = key
        self.publisher = publisher
        self.description = description
        func layer(rid: RID?, ssrc: SSRC?) -> IncomingLayer {
            IncomingLayer(
                rid: rid, ssrc: ssrc,
                keyframeRequests: KeyframeRequestThrottle(
                    senderSSRC: senderSSRC, mediaSSRC: ssrc ?? SSRC(0), interval: keyframeInterval))
        }
        let streams = description.sources?.streams ?? []
        if !description.simulcast.isEmpty {
            // rid simulcast; signalled SSRCs (rare) are matched by order.
            layers = description.simulcast.prefix(3).enumerated().map { i, l in
                layer(rid: l.rid, ssrc: streams.count == description.simulcast.count ? streams[i].ssrc : nil)
            }
            isSimulcast = layers.count > 1
        } else if let sources = description.sources, sources.isSimulcast, !streams.isEmpty {
            layers = streams.prefix(3).map { layer(rid: nil, ssrc: $0.ssrc) }
            isSimulcast = layers.count > 1
        } else {
            layers = [layer(rid: nil, ssrc: streams.first?.ssrc)]
            isSimulcast = false
        }
        var formats: [PayloadType: PayloadFormat] = [:]
        var rtx: Set<PayloadType> = []
        var repaired: [PayloadType: PayloadType] = [:]
        for c in description.codecs {
            formats[c.payloadType] = PayloadFormat(codec: c.codec, clockRate: c.clockRate)
            if let r = c.rtxPayloadType {
                rtx.insert(r)
                repaired[r] = c.payloadType
            }
        }
        self.formats = formats
        retransmissionPayloadTypes = rtx
        repairedPayloadTypes = repaired
        retransmissions = description.kind == .video ? .video() : .audio()
    }

    var isVideo: Bool { description.kind == .video }

    /// The per-layer bitrates the allocator prices this video track by:
    /// the source's report for a relayed track (it sees every layer the
    /// publisher sends, where this worker sees only those its relay
    /// carries), else what arrives here. A far subscriber that may take a
    /// higher layer gets it allocated at once, without that layer first
    /// crossing to be measured.
    func allocationRates(now: Instant) -> LayerRates {
        if let report = currentReport(now: now) {
            return LayerBitrateMeter.cumulativeRates { s, t in Int64(report[s, t]) }
        }
        return bitrates.cumulativeRates
    }

    /// What this worker tells its own far sides about the layers: the
    /// report it has (a relayed track relayed on), else its own measure.
    func bitratesToRelay(now: Instant) -> RelayedLayerBitrates {
        currentReport(now: now) ?? RelayedLayerBitrates { s, t in bitrates.rate(spatial: s, temporal: t) }
    }

    private func currentReport(now: Instant) -> RelayedLayerBitrates? {
        guard relaySource != nil, let report = reportedBitrates, now - report.at < Self.reportedBitratesLifetime else {
            return nil
        }
        return report.rates
    }

    /// Dynacast: the layers this worker's subscribers need (bit i: layer
    /// i): what is allocated, one above it so upgrades need no round trip
    /// to the publisher (unless the subscriber's preference caps it at its
    /// allocation: a layer it may not take is not kept flowing for it, nor
    /// carried by a relay to its worker or node; when the cap rises, a far
    /// side prices the layer from the source's report and asks for it at
    /// once), and the layer each one is forwarded now. A switch
    /// down waits for a keyframe of the lower layer; until it comes the
    /// subscriber is still on the higher one, which must keep flowing (a
    /// paused layer, or one a relay stopped carrying, would freeze it).
    var subscriptionDemand: UInt8 {
        var bits: UInt8 = 0
        let top = min(layers.count, 8) - 1
        guard top >= 0 else { return 0 }
        for s in subscriptions {
            if let current = s.simulcast?.currentLayer?.spatial, current <= top { bits |= 1 << UInt8(current) }
            guard let layer = s.allocated else { continue }
            let allocated = max(layer.spatial, 0)
            let cap = max(min(s.maxSpatialLayer(of: self) ?? top, top), allocated)
            for i in 0...min(allocated + 1, cap, top) { bits |= 1 << UInt8(i) }
        }
        return bits
    }

    /// The layer whose rid is `rid`.
    func layerIndex(rid: RID) -> Int? { layers.firstIndex { $0.rid == rid } }

    /// The layer receiving from `ssrc`.
    func layerIndex(ssrc: SSRC) -> Int? { layers.firstIndex { $0.ssrc == ssrc } }

    /// The highest layer that sent within `silence` before `now`.
    func highestLiveLayer(now: Instant, silence: Duration) -> Int? {
        layers.indices.last { i in layers[i].lastArrival.map { now - $0 < silence } ?? false }
    }
}

/// How a publisher transport's packets map to tracks.
final class PublisherRoutes {
    enum Route {
        /// Media of spatial layer `layer` of the track.
        case media(IncomingTrack, layer: Int)
        /// The RTX stream of a layer (nil: not known yet).
        case retransmission(IncomingTrack, layer: Int?)
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
    var repairedRIDExtensionID: UInt8?
    /// Arrivals of the transport's packets for transport-cc feedback to
    /// the publisher (its browser's estimate, and so its simulcast layers,
    /// grow on it); its extension id is the first track's.
    let arrivals: TransportWideArrivals

    init(reporterSSRC: SSRC) {
        arrivals = TransportWideArrivals(reporterSSRC: reporterSSRC)
    }

    func add(_ track: IncomingTrack) {
        let d = track.description
        byMID[d.mid] = track
        if midExtensionID == nil { midExtensionID = d.headerExtensions.mid }
        if ridExtensionID == nil { ridExtensionID = d.headerExtensions.rtpStreamID }
        if repairedRIDExtensionID == nil { repairedRIDExtensionID = d.headerExtensions.repairedRTPStreamID }
        if arrivals.extensionID == nil { arrivals.extensionID = d.headerExtensions.transportWideSequenceNumber }
        guard let sources = d.sources else { return }
        for stream in sources.streams {
            if let layer = track.layerIndex(ssrc: stream.ssrc) {
                bySSRC[stream.ssrc] = .media(track, layer: layer)
                if let rtx = stream.rtxSSRC { bySSRC[rtx] = .retransmission(track, layer: layer) }
            } else if let rtx = stream.rtxSSRC {
                bySSRC[rtx] = .retransmission(track, layer: nil)
            }
        }
    }

    func remove(_ track: IncomingTrack) {
        if byMID[track.description.mid] === track { byMID[track.description.mid] = nil }
        bySSRC = bySSRC.filter { _, route in
            switch route {
            case .media(let t, _), .retransmission(let t, _): t !== track
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
    /// The subscriber's RTX stream (RFC 4588), when negotiated: NACKed
    /// packets are resent on it, and bandwidth probes are padding on it.
    let rtxSSRC: SSRC?
    let rtxPayloadType: PayloadType?
    var rtxSequenceNumber: UInt16 = 1
    /// The subscriber's transport and link, resolved when commands open
    /// it (nil until then, and after it is gone): the per-packet egress
    /// reaches them without a lookup. Set through `RoomRouter.attach`,
    /// which keeps `RoomRouter.outgoing` in step.
    var sink: SubscriberSink?
    /// The track forwarded, resolved once when the subscription is made
    /// (weak: the track owns its subscriptions and removes them first).
    weak var track: IncomingTrack?
    var transportID: TransportID? { sink?.id }
    /// Audio (anything without simulcast): one continuous stream from one
    /// source. Nil for video, whose forwarder has its own.
    var rewriter: StreamRewriter?
    /// Video: layer selection and switching (wraps its own rewriter).
    var simulcast: SimulcastForwarder?
    /// `simulcast != nil`, fixed at init: the per-packet branch reads this
    /// flag, where `simulcast != nil` copied the optional forwarder out
    /// (perf: 1.2 to 1.8 % of the worker, issue #14).
    let forwardsLayers: Bool
    /// Layer switches already added to the worker's counters.
    var switchesCounted = 0
    /// What each outgoing sequence number was, to answer NACKs: only with
    /// RTX, the one way a NACK is answered (`retransmit`); nil without it
    /// (all audio: no table per subscription that nothing reads; a video
    /// one holds about a second of what is forwarded: 512 entries of 28
    /// bytes, 14 KiB, at 720p).
    var history: ForwardedPacketHistory?
    var sendStatistics: SendStatistics
    /// The subscriber's preference (`set-preference`).
    var preference = ReceivePreference()

    var isPaused: Bool { preference.isPaused }

    /// What the bandwidth allocator gives this subscription: a layer, or
    /// nil (paused: the estimate does not carry the lowest layer, or the
    /// subscriber paused it).
    private(set) var allocated: MediaLayer?
    /// Why the allocation last changed.
    private(set) var allocationReason: StreamStateReason = .bandwidth
    /// Whether an allocation was ever made (before it, everything flows).
    private(set) var hasAllocation = false
    /// What the subscriber was last told (`stream-state`): paused, or the
    /// spatial layer it receives.
    var announced: (paused: Bool, layer: Int?)?

    init(key: SubscriptionKey, outgoing: OutgoingTrack, sink: SubscriberSink?) {
        self.key = key
        outgoingSSRC = outgoing.ssrc
        payloadType = outgoing.codec.payloadType
        rtxPayloadType = outgoing.rtxSSRC == nil ? nil : outgoing.codec.rtxPayloadType
        rtxSSRC = rtxPayloadType == nil ? nil : outgoing.rtxSSRC
        history = rtxSSRC == nil ? nil : ForwardedPacketHistory()
        self.sink = sink
        forwardsLayers = outgoing.kind == .video
        if forwardsLayers {
            simulcast = SimulcastForwarder(outgoingSSRC: outgoing.ssrc, clockRate: outgoing.codec.clockRate)
        } else {
            rewriter = StreamRewriter(outgoingSSRC: outgoing.ssrc, clockRate: outgoing.codec.clockRate)
        }
        sendStatistics = SendStatistics(ssrc: outgoing.ssrc, clockRate: outgoing.codec.clockRate)
    }

    /// The publisher SSRC the subscriber decodes now.
    var currentSource: SSRC? { simulcast.map { $0.rewriter.currentSource } ?? rewriter?.currentSource }

    /// Audio (and anything without a forwarder) is paused only by an
    /// allocation that gives it nothing.
    var isAudioPaused: Bool { hasAllocation && allocated == nil }

    /// The highest spatial layer the preference allows: `maxLayer`, and the
    /// largest layer whose known width (from its keyframes) fits
    /// `maxWidth`; layers of unknown width count as halving per step down
    /// from the top one, as browsers' simulcast does (4:2:1).
    func maxSpatialLayer(of track: IncomingTrack) -> Int? {
        var cap = preference.maxLayer
        if let maxWidth = preference.maxWidth, maxWidth > 0, track.isVideo {
            let top = track.layers.count - 1
            let topWidth = track.layers.last?.width
            var fit = 0
            for i in track.layers.indices {
                let width = track.layers[i].width ?? topWidth.map { $0 >> (top - i) }
                if let width, width <= maxWidth { fit = i }
            }
            cap = min(cap ?? fit, fit)
        }
        return cap
    }

    /// Applies an allocation: the forwarder's target (nil pauses).
    func setAllocation(_ layer: MediaLayer?, reason: StreamStateReason, now: Instant) {
        if layer != allocated || !hasAllocation { allocationReason = reason }
        hasAllocation = true
        allocated = layer
        simulcast?.setTarget(layer, now: now)
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
