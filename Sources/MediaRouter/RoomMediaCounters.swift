import DTLS
import Forwarding
import PeerSession
import Wire

/// What one worker's media engine has done since it started, for metrics.
/// A plain value: the server reads a copy through a control closure.
package struct RoomMediaCounters: Equatable, Sendable {
    /// Decrypted RTP packets and their bytes, from every transport.
    package var rtpPacketsIn: UInt64 = 0
    package var rtpBytesIn: UInt64 = 0
    /// Decrypted RTCP compounds received.
    package var rtcpPacketsIn: UInt64 = 0
    /// Protected RTP packets queued to subscribers, and their bytes on the
    /// wire (SRTP trailer included).
    package var rtpPacketsOut: UInt64 = 0
    package var rtpBytesOut: UInt64 = 0
    /// RTCP compounds queued (reports and keyframe requests).
    package var rtcpPacketsOut: UInt64 = 0
    /// Packet copies forwarded: one per subscriber a packet reached.
    package var forwarded: UInt64 = 0
    package var dropped = Drops()
    /// Packet copies a subscriber did not get because of the layers it
    /// gets: normal simulcast selection and pausing, not loss.
    package var filtered = LayerFilter()
    /// Transports that failed, by reason.
    package var failures = TransportFailures()
    /// Keyframe requests sent upstream, and those the per-track throttle
    /// absorbed.
    package var plisForwarded: UInt64 = 0
    package var firsForwarded: UInt64 = 0
    package var keyframeRequestsSuppressed: UInt64 = 0
    package var senderReportsSent: UInt64 = 0
    package var receiverReportsSent: UInt64 = 0
    /// Transport-cc feedback packets sent to publishers.
    package var transportFeedbackSent: UInt64 = 0
    /// Loss recovery: NACK packets from subscribers and to publishers,
    /// packets resent to subscribers (from the retransmission buffer),
    /// NACKed packets not resent (gone from the buffer or history, or over
    /// the rate limit), and RTX packets from publishers restored.
    package var nacksReceived: UInt64 = 0
    package var nacksSent: UInt64 = 0
    package var retransmissionsSent: UInt64 = 0
    package var retransmissionsUnavailable: UInt64 = 0
    /// NACK packets from subscriptions without RTX: not answered (a resend
    /// on the media SSRC would reuse an SRTP index); video asks the
    /// publisher for a keyframe instead.
    package var nacksWithoutRTX: UInt64 = 0
    package var retransmissionsLimited: UInt64 = 0
    package var retransmissionsReceived: UInt64 = 0
    /// Padding-only packets that filled an outgoing number kept free for a
    /// late packet that was then not forwarded.
    package var gapsFilled: UInt64 = 0
    /// Padding bytes sent to probe subscribers' bandwidth.
    package var probeBytesSent: UInt64 = 0
    /// Simulcast: spatial layer switches completed (summed over
    /// subscriptions when they end or at snapshot), and the latency of
    /// the last ones (request to first packet of the new layer).
    package var layerSwitches: UInt64 = 0
    package var layerSwitchLatency = DurationHistogram(.layerSwitch)
    /// Commands for another worker, or naming an unknown transport or track.
    package var commandsIgnored: UInt64 = 0
    /// Data channel messages read from publishers and reported, refused by
    /// the channel table (bad DCEP, unknown stream), relayed to a
    /// recipient, and not deliverable (no channel of that label, SCTP
    /// buffer full or message too large).
    package var dataMessagesReceived: UInt64 = 0
    package var dataMessagesRefused: UInt64 = 0
    package var dataMessagesSent: UInt64 = 0
    package var dataMessagesUndeliverable: UInt64 = 0
    /// Relays between workers (a room spanning them): packets sent to far
    /// workers (once per packet per far worker; resends included) and
    /// received from source workers; relay messages dropped because the
    /// link was full (media, sender reports, feedback); feedback messages
    /// sent and received; packets resent to a far worker for its NACKs,
    /// and NACK entries sent upstream for far subscribers.
    package var relayPacketsOut: UInt64 = 0
    package var relayPacketsIn: UInt64 = 0
    package var relayDrops: UInt64 = 0
    package var relayFeedbackSent: UInt64 = 0
    package var relayFeedbackReceived: UInt64 = 0
    package var relayRetransmissionsSent: UInt64 = 0
    package var relayNACKsSent: UInt64 = 0
    /// Far side: subscriber NACKs not sent upstream, the same loss having
    /// been asked for within `UpstreamNACKMemory.window`.
    package var relayNACKsSuppressed: UInt64 = 0
    /// Source side: packets of a layer a far worker said it does not need
    /// (not sent to it), and layer demands received from far workers.
    package var relayPacketsNotWanted: UInt64 = 0
    package var relayLayerDemands: UInt64 = 0
    /// Layer bitrate reports sent to far sides (one per simulcast track per
    /// relay a second) and received from sources.
    package var relayLayerBitratesSent: UInt64 = 0
    package var relayLayerBitratesReceived: UInt64 = 0

    package init() {}

    /// Why packets were not forwarded. RTP drops before routing count once
    /// per packet; drops for one subscriber count once per subscriber.
    package struct Drops: Equatable, Sendable {
        /// RTP header, or VP8/H.264 payload descriptor, did not parse; or
        /// an RTCP compound did not.
        package var malformed: UInt64 = 0
        package var malformedRTCP: UInt64 = 0
        /// No track for the SSRC (nor its mid), or not a publisher transport.
        package var unknownSource: UInt64 = 0
        /// A simulcast packet whose layer the track does not have (a rid
        /// it did not announce, an unsignalled SSRC of an SSRC-group track).
        package var unknownLayer: UInt64 = 0
        /// RTX (by payload type or SSRC): NACK/RTX is not implemented yet.
        package var retransmission: UInt64 = 0
        /// A payload type the track did not negotiate.
        package var unknownPayloadType: UInt64 = 0
        /// The subscriber's transport is not open or not connected.
        package var subscriberNotConnected: UInt64 = 0
        /// The rewriter's reasons (`DropReason`).
        package var notCurrentSource: UInt64 = 0
        package var beforeSourceSwitch: UInt64 = 0
        package var duplicate: UInt64 = 0
        package var outsideHistory: UInt64 = 0
        package var paddingOnly: UInt64 = 0
        package var notForwarded: UInt64 = 0
        /// Did not fit a transmit slot, or the rewrite or protection failed.
        package var sendFailed: UInt64 = 0
        /// An SSRC a publisher transport's track has no room to learn
        /// (mid/rid name it, but the track already learned one media and one
        /// RTX SSRC per layer): `IncomingTrack.learnedSSRCLimit`.
        package var unsignalledSSRC: UInt64 = 0
        /// SRTP/SRTCP from a new SSRC on a transport that already knows
        /// `PeerTransport.Configuration.maxInboundSSRCs`: dropped before
        /// decryption.
        package var srtpSSRCLimit: UInt64 = 0
        /// A packet whose SRTP index was protected before: refused at the
        /// protect seam (never sent; RFC 7714 section 8.1). Should stay 0.
        package var repeatedSRTPIndex: UInt64 = 0
        /// Transport-cc feedback over a subscriber transport's rate limit
        /// (`SubscriberLink.feedbackLimiter`), not processed.
        package var transportFeedbackLimited: UInt64 = 0
        /// A relayed packet, sender report or feedback naming a relay this
        /// worker does not hold (a removal racing the ring).
        package var unknownRelay: UInt64 = 0

        package init() {}

        /// The simulcast selector's reasons that are drops: nothing is
        /// forwarded yet and the wanted layer's keyframe has not come (the
        /// subscriber sees nothing meanwhile), or a layer index out of range.
        package var waitingForKeyframe: UInt64 = 0
        package var spatialLayerOutOfRange: UInt64 = 0

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
package struct LayerFilter: Equatable, Sendable {
    /// Another spatial layer than the one this subscriber gets.
    package var otherLayer: UInt64 = 0
    /// A temporal layer above the one this subscriber gets.
    package var temporalLayerAbove: UInt64 = 0
    /// The subscriber paused the track (maxWidth 0, or audio off).
    package var paused: UInt64 = 0
    /// The track is muted (`MediaCommand.setTrackMuted`): counted once per
    /// packet, at its source.
    package var muted: UInt64 = 0
    package init() {}
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
package struct TransportFailures: Equatable, Sendable {
    /// ICE: no connectivity check arrived before the connect timeout (our
    /// lite agent's only way to fail before it has an address).
    package var iceConnectTimeout: UInt64 = 0
    /// ICE: consent expired, no check for 30 s (RFC 7675 section 5.1).
    package var iceConsentExpired: UInt64 = 0
    /// DTLS: the handshake made no progress through every retransmission
    /// (RFC 6347 section 4.2.4).
    package var dtlsHandshakeTimeout: UInt64 = 0
    /// DTLS: OpenSSL failed the handshake (a fatal alert, a protocol error).
    package var dtlsHandshakeFailed: UInt64 = 0
    /// DTLS: a fatal alert or protocol error after the handshake.
    package var dtlsConnectionFailed: UInt64 = 0
    /// DTLS: the peer's certificate matched no SDP fingerprint (RFC 8122
    /// section 5).
    package var dtlsFingerprintMismatch: UInt64 = 0
    /// DTLS-SRTP: no `use_srtp` agreement (RFC 5764 section 4.1.2), key
    /// export failed, or SRTP could not be set up with the keys.
    package var dtlsSRTPSetupFailed: UInt64 = 0
    /// DTLS: our own set-up failed (certificate, context).
    package var dtlsSetupFailed: UInt64 = 0
    package init() {}

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
