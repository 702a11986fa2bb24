import NetIO

extension MediaMetrics {
    /// The media workers' UDP sends (docs/ARCHITECTURE.md, "The path of one
    /// packet"), summed over workers: `sendmmsg` calls, UDP GSO messages and
    /// the datagrams they carried, and sockets where GSO is on or fell back.
    static func udpSendPrometheus(_ sends: [UDPSegmentation]) -> String {
        func sum(_ value: (UDPSegmentation) -> Int) -> Int { sends.reduce(0) { $0 + value($1) } }
        let counters: [(String, String, Int)] = [
            ("swiftlet_udp_send_calls_total", "sendmmsg calls made by the media workers.", sum(\.sendCalls)),
            (
                "swiftlet_udp_gso_messages_total", "UDP GSO messages sent (several datagrams to one destination).",
                sum(\.messages)
            ),
            ("swiftlet_udp_gso_segments_total", "Datagrams sent inside UDP GSO messages.", sum(\.segments)),
            (
                "swiftlet_udp_gso_fallbacks_total", "Worker sockets that turned UDP GSO off after the kernel refused it.",
                sum(\.fallbacks)
            ),
        ]
        var out = ""
        for (name, help, value) in counters {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        let enabled = sends.filter(\.enabled).count
        out += "# HELP swiftlet_udp_gso_enabled_workers Media workers whose socket sends with UDP GSO now.\n"
        out += "# TYPE swiftlet_udp_gso_enabled_workers gauge\nswiftlet_udp_gso_enabled_workers \(enabled)\n"
        return out
    }
}
