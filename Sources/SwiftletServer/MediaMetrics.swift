import MediaWorker

/// The media workers' counters in Prometheus text format, summed over workers.
enum MediaMetrics {
    static func prometheus(_ snapshots: [MediaPlane.WorkerSnapshot]) -> String {
        let workers = snapshots.map(\.counters)
        func sum(_ value: (RoomMediaCounters) -> UInt64) -> UInt64 { workers.reduce(0) { $0 + value($1) } }
        let rows: [(String, String, UInt64)] = [
            ("swiftlet_rtp_packets_received_total", "Decrypted RTP packets received from publishers.", sum(\.rtpPacketsIn)),
            ("swiftlet_rtp_received_bytes_total", "Bytes of decrypted RTP received.", sum(\.rtpBytesIn)),
            ("swiftlet_rtp_packets_sent_total", "RTP packets sent to subscribers.", sum(\.rtpPacketsOut)),
            ("swiftlet_rtp_sent_bytes_total", "Bytes of protected RTP sent.", sum(\.rtpBytesOut)),
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
        ]
        var out = ""
        for (name, help, value) in rows {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        let drops: [(String, KeyPath<RoomMediaCounters.Drops, UInt64>)] = [
            ("malformed", \.malformed), ("malformed_rtcp", \.malformedRTCP), ("unknown_source", \.unknownSource),
            ("other_layer", \.otherLayer), ("retransmission", \.retransmission), ("unknown_payload_type", \.unknownPayloadType),
            ("paused", \.paused), ("subscriber_not_connected", \.subscriberNotConnected),
            ("not_current_source", \.notCurrentSource),
            ("before_source_switch", \.beforeSourceSwitch), ("duplicate", \.duplicate), ("outside_history", \.outsideHistory),
            ("padding_only", \.paddingOnly), ("not_forwarded", \.notForwarded), ("send_failed", \.sendFailed),
        ]
        out += "# HELP swiftlet_dropped_packets_total RTP packets not forwarded, by reason.\n"
        out += "# TYPE swiftlet_dropped_packets_total counter\n"
        for (reason, path) in drops {
            out +=
                "swiftlet_dropped_packets_total{reason=\"\(reason)\"} \(workers.reduce(0) { $0 + $1.dropped[keyPath: path] })\n"
        }
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
        out += "# HELP swiftlet_media_workers Media worker threads answering.\n# TYPE swiftlet_media_workers gauge\n"
        out += "swiftlet_media_workers \(workers.count)\n"
        return out
    }
}
