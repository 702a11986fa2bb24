import DTLS
import Forwarding
import PeerSession

/// What one worker's media engine has done since it started, for metrics.
/// A plain value: the server reads a copy through a control closure.
public struct RoomMediaCounters: Equatable, Sendable {
    /// Decrypted RTP packets and their bytes, from every transport.
    public var rtpPacketsIn: UInt64 = 0
    public var rtpBytesIn: UInt64 = 0
    /// Decrypted RTCP compounds received.
    public var rtcpPacketsIn: UInt64 = 0
    /// Protected RTP packets queued to subscribers, and their bytes on the
    /// wire (SRTP trailer included).
    public var rtpPacketsOut: UInt64 = 0
    public var rtpBytesOut: UInt64 = 0
    /// RTCP compounds queued (reports and keyframe requests).
    public var rtcpPacketsOut: UInt64 = 0
    /// Packet copies forwarded: one per subscriber a packet reached.
    public var forwarded: UInt64 = 0
    public var dropped = Drops()
    /// Packet copies a subscriber did not get because of the layers it
    /// gets: normal simulcast selection and pausing, not loss.
    public var filtered = LayerFilter()
    /// Transports that failed, by reason.
    public var failures = TransportFailures()
    /// Keyframe requests sent upstream, and those the per-track throttle
    /// absorbed.
    public var plisForwarded: UInt64 = 0
    public var firsForwarded: UInt64 = 0
    public var keyframeRequestsSuppressed: UInt64 = 0
    public var senderReportsSent: UInt64 = 0
    public var receiverReportsSent: UInt64 = 0
    /// Transport-cc feedback packets sent to publishers.
    public var transportFeedbackSent: UInt64 = 0
    /// Loss recovery: NACK packets from subscribers and to publishers,
    /// packets resent to subscribers (from the retransmission buffer),
    /// NACKed packets not resent (gone from the buffer or history, or over
    /// the rate limit), and RTX packets from publishers restored.
    public var nacksReceived: UInt64 = 0
    public var nacksSent: UInt64 = 0
    public var retransmissionsSent: UInt64 = 0
    public var retransmissionsUnavailable: UInt64 = 0
    /// NACK packets from subscriptions without RTX: not answered (a resend
    /// on the media SSRC would reuse an SRTP index); video asks the
    /// publisher for a keyframe instead.
    public var nacksWithoutRTX: UInt64 = 0
    public var retransmissionsLimited: UInt64 = 0
    public var retransmissionsReceived: UInt64 = 0
    /// Padding-only packets that filled an outgoing number kept free for a
    /// late packet that was then not forwarded.
    public var gapsFilled: UInt64 = 0
    /// Padding bytes sent to probe subscribers' bandwidth.
    public var probeBytesSent: UInt64 = 0
    /// Simulcast: spatial layer switches completed (summed over
    /// subscriptions when they end or at snapshot), and the latency of
    /// the last ones (request to first packet of the new layer).
    public var layerSwitches: UInt64 = 0
    public var layerSwitchLatency = LatencyHistogram()
    /// Commands for another worker, or naming an unknown transport or track.
    public var commandsIgnored: UInt64 = 0

    public init() {}

    /// Why packets were not forwarded. RTP drops before routing count once
    /// per packet; drops for one subscriber count once per subscriber.
    public struct Drops: Equatable, Sendable {
        /// RTP header, or VP8/H.264 payload descriptor, did not parse; or
        /// an RTCP compound did not.
        public var malformed: UInt64 = 0
        public var malformedRTCP: UInt64 = 0
        /// No track for the SSRC (nor its mid), or not a publisher transport.
        public var unknownSource: UInt64 = 0
        /// A simulcast packet whose layer the track does not have (a rid
        /// it did not announce, an unsignalled SSRC of an SSRC-group track).
        public var unknownLayer: UInt64 = 0
        /// RTX (by payload type or SSRC): NACK/RTX is not implemented yet.
        public var retransmission: UInt64 = 0
        /// A payload type the track did not negotiate.
        public var unknownPayloadType: UInt64 = 0
        /// The subscriber's transport is not open or not connected.
        public var subscriberNotConnected: UInt64 = 0
        /// The rewriter's reasons (`DropReason`).
        public var notCurrentSource: UInt64 = 0
        public var beforeSourceSwitch: UInt64 = 0
        public var duplicate: UInt64 = 0
        public var outsideHistory: UInt64 = 0
        public var paddingOnly: UInt64 = 0
        public var notForwarded: UInt64 = 0
        /// Did not fit a transmit slot, or the rewrite or protection failed.
        public var sendFailed: UInt64 = 0
        /// An SSRC a publisher transport's track has no room to learn
        /// (mid/rid name it, but the track already learned one media and one
        /// RTX SSRC per layer): `IncomingTrack.learnedSSRCLimit`.
        public var unsignalledSSRC: UInt64 = 0
        /// SRTP/SRTCP from a new SSRC on a transport that already knows
        /// `PeerTransport.Configuration.maxInboundSSRCs`: dropped before
        /// decryption.
        public var srtpSSRCLimit: UInt64 = 0
        /// A packet whose SRTP index was protected before: refused at the
        /// protect seam (never sent; RFC 7714 section 8.1). Should stay 0.
        public var repeatedSRTPIndex: UInt64 = 0
        /// Transport-cc feedback over a subscriber transport's rate limit
        /// (`SubscriberLink.feedbackLimiter`), not processed.
        public var transportFeedbackLimited: UInt64 = 0

        public init() {}

        /// The simulcast selector's reasons that are drops: nothing is
        /// forwarded yet and the wanted layer's keyframe has not come (the
        /// subscriber sees nothing meanwhile), or a layer index out of range.
        public var waitingForKeyframe: UInt64 = 0
        public var spatialLayerOutOfRange: UInt64 = 0

        mutating func count(_ reason: DropReason) {
            switch reason {
            case .notCurrentSource: notCurrentSource &+= 1
            case .beforeSourceSwitch: beforeSourceSwitch &+= 1
            case .duplicate: duplicate &+= 1
            case .outsideHistory: outsideHistory &+= 1
            case .paddingOnly: paddingOnly &+= 1
            case .notForwarded: notForwarded &+= 1
            }
        }
    }
}

/// Packets held back by layer selection (`swiftlet_layer_filtered_packets_total`):
/// the forwarder chose not to send them and the subscriber misses nothing
/// it asked for.
public struct LayerFilter: Equatable, Sendable {
    /// Another spatial layer than the one this subscriber gets.
    public var otherLayer: UInt64 = 0
    /// A temporal layer above the one this subscriber gets.
    public var temporalLayerAbove: UInt64 = 0
    /// The subscriber paused the track (maxWidth 0, or audio off).
    public var paused: UInt64 = 0
    public init() {}
}

extension RoomMediaCounters {
    /// The simulcast selector's reason, as a filter or a drop.
    mutating func count(_ reason: SimulcastDropReason) {
        switch reason {
        case .paused: filtered.paused &+= 1
        case .otherSpatialLayer: filtered.otherLayer &+= 1
        case .temporalLayerAbove: filtered.temporalLayerAbove &+= 1
        case .waitingForKeyframe: dropped.waitingForKeyframe &+= 1
        case .spatialLayerOutOfRange: dropped.spatialLayerOutOfRange &+= 1
        }
    }
}

/// Why transports failed, from what ICE and DTLS report
/// (`PeerTransportFailure`).
public struct TransportFailures: Equatable, Sendable {
    /// ICE: no connectivity check arrived before the connect timeout (our
    /// lite agent's only way to fail before it has an address).
    public var iceConnectTimeout: UInt64 = 0
    /// ICE: consent expired, no check for 30 s (RFC 7675 section 5.1).
    public var iceConsentExpired: UInt64 = 0
    /// DTLS: the handshake made no progress through every retransmission
    /// (RFC 6347 section 4.2.4).
    public var dtlsHandshakeTimeout: UInt64 = 0
    /// DTLS: OpenSSL failed the handshake (a fatal alert, a protocol error).
    public var dtlsHandshakeFailed: UInt64 = 0
    /// DTLS: a fatal alert or protocol error after the handshake.
    public var dtlsConnectionFailed: UInt64 = 0
    /// DTLS: the peer's certificate matched no SDP fingerprint (RFC 8122
    /// section 5).
    public var dtlsFingerprintMismatch: UInt64 = 0
    /// DTLS-SRTP: no `use_srtp` agreement (RFC 5764 section 4.1.2), key
    /// export failed, or SRTP could not be set up with the keys.
    public var dtlsSRTPSetupFailed: UInt64 = 0
    /// DTLS: our own set-up failed (certificate, context).
    public var dtlsSetupFailed: UInt64 = 0
    public init() {}

    mutating func count(_ failure: PeerTransportFailure) {
        switch failure {
        case .iceFailed: iceConnectTimeout &+= 1
        case .consentExpired: iceConsentExpired &+= 1
        case .srtpSetupFailed: dtlsSRTPSetupFailed &+= 1
        case .dtls(let error):
            switch error {
            case .timeout: dtlsHandshakeTimeout &+= 1
            case .handshakeFailed: dtlsHandshakeFailed &+= 1
            case .connectionFailed: dtlsConnectionFailed &+= 1
            case .fingerprintMismatch: dtlsFingerprintMismatch &+= 1
            case .noSRTPProfile, .keyingMaterialExportFailed: dtlsSRTPSetupFailed &+= 1
            case .certificateGenerationFailed, .invalidPEM, .setupFailed: dtlsSetupFailed &+= 1
            }
        }
    }
}

/// Durations in fixed buckets (upper bounds in milliseconds), for switch
/// latency: enough for p50/p95 without keeping samples.
public struct LatencyHistogram: Equatable, Sendable {
    public static let bucketBounds: [Int64] = [50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000]
    /// One count per bound, and a last one for longer.
    public private(set) var counts: [UInt64] = Array(repeating: 0, count: LatencyHistogram.bucketBounds.count + 1)
    public private(set) var total: UInt64 = 0
    public private(set) var sumMilliseconds: Int64 = 0

    public init() {}

    public mutating func record(_ d: Duration) {
        let ms = d.nanoseconds / 1_000_000
        let i = Self.bucketBounds.firstIndex { ms <= $0 } ?? Self.bucketBounds.count
        counts[i] &+= 1
        total &+= 1
        sumMilliseconds &+= ms
    }

    public mutating func merge(_ other: LatencyHistogram) {
        for i in counts.indices { counts[i] &+= other.counts[i] }
        total &+= other.total
        sumMilliseconds &+= other.sumMilliseconds
    }

    /// The bucket bound at or below which `fraction` of the samples lie
    /// (nil without samples; Int64.max past the last bound).
    public func quantile(_ fraction: Double) -> Int64? {
        guard total > 0 else { return nil }
        let wanted = UInt64((Double(total) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() {
            seen += c
            if seen >= wanted { return i < Self.bucketBounds.count ? Self.bucketBounds[i] : .max }
        }
        return .max
    }
}
