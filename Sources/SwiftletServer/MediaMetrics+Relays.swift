import MediaWorker

extension MediaMetrics {
    /// The rings between media workers (docs/ARCHITECTURE.md, "Rooms over
    /// every worker"), summed over workers: what crossed, and what a full
    /// ring dropped.
    static func relayPrometheus(_ counts: [RelayCounts]) -> String {
        func sum(_ value: (RelayCounts) -> UInt64) -> UInt64 { counts.reduce(0) { $0 &+ value($1) } }
        let rows: [(String, String, UInt64)] = [
            (
                "swiftlet_relay_packets_sent_total", "Packets and sender reports pushed to another worker's ring.",
                sum(\.mediaSent)
            ),
            (
                "swiftlet_relay_packets_received_total", "Relayed packets and sender reports drained from other workers.",
                sum(\.mediaReceived)
            ),
            (
                "swiftlet_relay_ring_drops_total", "Relayed packets dropped because the far worker's ring was full.",
                sum(\.mediaDroppedFull)
            ),
            ("swiftlet_relay_refused_total", "Relayed packets refused as longer than a ring slot.", sum(\.mediaRefused)),
            (
                "swiftlet_relay_feedback_sent_total", "Keyframe requests, NACKs and layer demand sent to a source worker.",
                sum(\.feedbackSent)
            ),
            ("swiftlet_relay_feedback_dropped_total", "Relay feedback dropped: ring full or refused.", sum(\.feedbackDropped)),
            (
                "swiftlet_relay_wakes_total", "Eventfd wakes between workers (at most one per worker pair per loop turn).",
                sum(\.wakesSent)
            ),
        ]
        var out = ""
        for (name, help, value) in rows {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        return out
    }
}
