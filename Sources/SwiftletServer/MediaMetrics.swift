import MediaRouter
import MediaWorker
import NetIO
import Wire

/// The media workers' counters in Prometheus text format, summed over workers.
enum MediaMetrics {
    static func prometheus(_ snapshots: [MediaPlane.WorkerSnapshot]) -> String {
        let workers = snapshots.map(\.counters)
        func sum(_ value: (RoomMediaCounters) -> UInt64) -> UInt64 { workers.reduce(0) { $0 + value($1) } }
        let rows: [(String, String, UInt64)] = [
            ("swiftlet_rtp_packets_received_total", "Decrypted RTP packets received from publishers.", sum(\.rtpPacketsIn)),
            ("swiftlet_rtp_bytes_received_total", "Bytes of decrypted RTP received.", sum(\.rtpBytesIn)),
            ("swiftlet_rtp_packets_sent_total", "RTP packets sent to subscribers.", sum(\.rtpPacketsOut)),
            ("swiftlet_rtp_bytes_sent_total", "Bytes of protected RTP sent.", sum(\.rtpBytesOut)),
            ("swiftlet_rtcp_packets_received_total", "Decrypted RTCP compounds received.", sum(\.rtcpPacketsIn)),
            ("swiftlet_rtcp_packets_sent_total", "RTCP compounds sent.", sum(\.rtcpPacketsOut)),
            ("swiftlet_forwarded_packets_total", "Packet copies forwarded, one per subscriber reached.", sum(\.forwarded)),
            ("swiftlet_plis_forwarded_total", "Picture loss indications sent to publishers.", sum(\.plisForwarded)),
            (
                "swiftlet_transport_feedback_sent_total", "Transport-cc feedback packets sent to publishers.",
                sum(\.transportFeedbackSent)
            ),
            (
                "swiftlet_keyframe_requests_suppressed_total", "Keyframe requests absorbed by the per-track throttle.",
                sum(\.keyframeRequestsSuppressed)
            ),
            ("swiftlet_nacks_received_total", "NACK packets received from subscribers.", sum(\.nacksReceived)),
            ("swiftlet_nacks_sent_total", "NACK packets sent to publishers.", sum(\.nacksSent)),
            (
                "swiftlet_retransmissions_sent_total", "Packets resent to subscribers from the retransmission buffer.",
                sum(\.retransmissionsSent)
            ),
            (
                "swiftlet_retransmissions_unavailable_total", "NACKed packets no longer in the buffer or history.",
                sum(\.retransmissionsUnavailable)
            ),
            (
                "swiftlet_nacks_without_rtx_total",
                "NACK packets from subscriptions without RTX: not answered (one SRTP index, one packet); video asks for a keyframe.",
                sum(\.nacksWithoutRTX)
            ),
            (
                "swiftlet_retransmissions_limited_total", "NACKed packets not resent: rate limit or resent within an RTT.",
                sum(\.retransmissionsLimited)
            ),
            (
                "swiftlet_retransmissions_received_total", "RTX packets from publishers restored and forwarded.",
                sum(\.retransmissionsReceived)
            ),
            (
                "swiftlet_gaps_filled_total", "Padding packets filling a number kept free for a packet then not forwarded.",
                sum(\.gapsFilled)
            ),
            ("swiftlet_probe_bytes_sent_total", "Padding bytes sent to probe subscribers' bandwidth.", sum(\.probeBytesSent)),
            ("swiftlet_layer_switches_total", "Simulcast spatial layer switches completed.", sum(\.layerSwitches)),
            (
                "swiftlet_relay_packets_not_wanted_total",
                "Packets of a simulcast layer not sent to a far worker whose subscribers do not need it.",
                sum(\.relayPacketsNotWanted)
            ),
            (
                "swiftlet_relay_layer_demands_total",
                "Layer demands received from far workers and nodes (what their subscribers need of a simulcast track).",
                sum(\.relayLayerDemands)
            ),
            (
                "swiftlet_relay_layer_bitrates_received_total",
                "Reports of a relayed simulcast track's per-layer bitrates received from its source (one a second).",
                sum(\.relayLayerBitratesReceived)
            ),
            (
                "swiftlet_relay_nacks_sent_total",
                "NACK entries sent to a source worker or node for packets a far subscriber asked for and this worker lacks.",
                sum(\.relayNACKsSent)
            ),
            (
                "swiftlet_relay_nacks_suppressed_total",
                "Far subscribers' NACKs not sent upstream: the same loss was asked for within 100 ms.",
                sum(\.relayNACKsSuppressed)
            ),
            (
                "swiftlet_relay_retransmissions_sent_total",
                "Packets resent from the buffer to a far worker or node for its NACKs.",
                sum(\.relayRetransmissionsSent)
            ),
        ]
        var out = ""
        for (name, help, value) in rows {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        let drops: [(String, KeyPath<RoomMediaCounters.Drops, UInt64>)] = [
            ("malformed", \.malformed), ("malformed_rtcp", \.malformedRTCP), ("unknown_source", \.unknownSource),
            ("unknown_layer", \.unknownLayer), ("retransmission", \.retransmission),
            ("unknown_payload_type", \.unknownPayloadType), ("subscriber_not_connected", \.subscriberNotConnected),
            ("not_current_source", \.notCurrentSource),
            ("before_source_switch", \.beforeSourceSwitch), ("duplicate", \.duplicate), ("outside_history", \.outsideHistory),
            ("padding_only", \.paddingOnly), ("not_forwarded", \.notForwarded), ("send_failed", \.sendFailed),
            ("waiting_for_keyframe", \.waitingForKeyframe), ("spatial_layer_out_of_range", \.spatialLayerOutOfRange),
            ("unsignalled_ssrc", \.unsignalledSSRC), ("srtp_ssrc_limit", \.srtpSSRCLimit),
            ("repeated_srtp_index", \.repeatedSRTPIndex),
            ("transport_feedback_limited", \.transportFeedbackLimited), ("unknown_relay", \.unknownRelay),
        ]
        out += labelled(
            "swiftlet_dropped_packets_total", "RTP packets not forwarded, by reason (layer selection is not a drop).",
            drops.map { reason, path in (reason, sum { $0.dropped[keyPath: path] }) })
        let filters: [(String, KeyPath<LayerFilter, UInt64>)] = [
            ("other_layer", \.otherLayer), ("temporal_layer_above", \.temporalLayerAbove), ("paused", \.paused),
            ("muted", \.muted),
        ]
        out += labelled(
            "swiftlet_layer_filtered_packets_total",
            "Packet copies not sent to a subscriber because of the layers it gets (simulcast selection, pausing).",
            filters.map { reason, path in (reason, sum { $0.filtered[keyPath: path] }) })
        let ice: [(String, KeyPath<TransportFailures, UInt64>)] = [
            ("connect_timeout", \.iceConnectTimeout), ("consent_expired", \.iceConsentExpired),
        ]
        out += labelled(
            "swiftlet_ice_failures_total", "Media transports whose ICE failed, by reason.",
            ice.map { reason, path in (reason, sum { $0.failures[keyPath: path] }) })
        let dtls: [(String, KeyPath<TransportFailures, UInt64>)] = [
            ("handshake_timeout", \.dtlsHandshakeTimeout), ("handshake_failed", \.dtlsHandshakeFailed),
            ("connection_failed", \.dtlsConnectionFailed), ("fingerprint_mismatch", \.dtlsFingerprintMismatch),
            ("srtp_setup_failed", \.dtlsSRTPSetupFailed), ("setup_failed", \.dtlsSetupFailed),
        ]
        out += labelled(
            "swiftlet_dtls_failures_total", "Media transports whose DTLS (or DTLS-SRTP keying) failed, by reason.",
            dtls.map { reason, path in (reason, sum { $0.failures[keyPath: path] }) })
        // Switch latency: request (target change) to first packet of the new
        // layer, a Prometheus histogram over fixed buckets.
        var latency = DurationHistogram(.layerSwitch)
        for w in workers { latency.merge(w.layerSwitchLatency) }
        out += latency.prometheus(
            "swiftlet_layer_switch_seconds", help: "Simulcast switch latency: target change to first packet of the layer.")
        let gauges: [(String, String, Int)] = [
            (
                "swiftlet_media_transports", "Peer transports (publisher and subscriber) open now.",
                snapshots.reduce(0) { $0 + $1.transports }
            ),
            ("swiftlet_tracks_published", "Tracks being received from publishers now.", snapshots.reduce(0) { $0 + $1.tracks }),
            (
                "swiftlet_tracks_subscribed", "Track copies being forwarded to subscribers now.",
                snapshots.reduce(0) { $0 + $1.subscriptions }
            ),
        ]
        for (name, help, value) in gauges {
            out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
        }
        out += iceTCP(snapshots)
        out += perWorker(snapshots)
        out += "# HELP swiftlet_media_workers Media worker threads answering.\n# TYPE swiftlet_media_workers gauge\n"
        out += "swiftlet_media_workers \(workers.count)\n"
        return out
    }

    /// The ICE-TCP ports (RFC 6544) of every worker.
    static func iceTCP(_ snapshots: [MediaPlane.WorkerSnapshot]) -> String {
        func sum(_ value: (ICETCPCounters) -> Int) -> UInt64 { snapshots.reduce(0) { $0 + UInt64(value($1.iceTCP)) } }
        var out = labelled(
            "swiftlet_ice_tcp_connections_total", "ICE-TCP connections, by what became of them.",
            [
                ("accepted", sum(\.accepted)), ("refused", sum(\.refused)), ("binding_timeout", sum(\.bindingTimeouts)),
                ("idle_timeout", sum(\.idleTimeouts)), ("closed", sum(\.closed)),
            ])
        out += "# HELP swiftlet_ice_tcp_frames_received_total RFC 4571 frames read from ICE-TCP connections.\n"
        out +=
            "# TYPE swiftlet_ice_tcp_frames_received_total counter\nswiftlet_ice_tcp_frames_received_total \(sum(\.framesReceived))\n"
        out += "# HELP swiftlet_ice_tcp_frames_sent_total Packets queued framed on ICE-TCP connections.\n"
        out += "# TYPE swiftlet_ice_tcp_frames_sent_total counter\nswiftlet_ice_tcp_frames_sent_total \(sum(\.framesSent))\n"
        out += labelled(
            "swiftlet_ice_tcp_dropped_total", "ICE-TCP packets dropped, by reason.",
            [
                ("framing", sum(\.framingErrors)), ("send_buffer_full", sum(\.sendBufferDrops)),
                ("no_connection", sum(\.noConnectionDrops)),
            ])
        out += "# HELP swiftlet_ice_tcp_connections ICE-TCP connections open now.\n# TYPE swiftlet_ice_tcp_connections gauge\n"
        out += "swiftlet_ice_tcp_connections \(snapshots.reduce(0) { $0 + $1.iceTCPConnections })\n"
        return out
    }

    /// One counter family with a `reason` label per row.
    /// What each worker holds and forwards: where a room spanning workers
    /// placed its participants, and how the forwarding splits between
    /// cores (docs/ARCHITECTURE.md, "Rooms over every worker").
    static func perWorker(_ snapshots: [MediaPlane.WorkerSnapshot]) -> String {
        var out = "# HELP swiftlet_worker_transports Peer transports each media worker holds now.\n"
        out += "# TYPE swiftlet_worker_transports gauge\n"
        for (i, s) in snapshots.enumerated() { out += "swiftlet_worker_transports{worker=\"\(i)\"} \(s.transports)\n" }
        out += "# HELP swiftlet_worker_forwarded_packets_total Packet copies each media worker forwarded.\n"
        out += "# TYPE swiftlet_worker_forwarded_packets_total counter\n"
        for (i, s) in snapshots.enumerated() {
            out += "swiftlet_worker_forwarded_packets_total{worker=\"\(i)\"} \(s.counters.forwarded)\n"
        }
        return out
    }

    static func labelled(_ name: String, _ help: String, _ rows: [(String, UInt64)]) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        for (reason, value) in rows { out += "\(name){reason=\"\(reason)\"} \(value)\n" }
        return out
    }
}
