import Foundation
import MediaRouter
import MediaWorker
import Testing

@testable import SwiftletServer

@Suite struct MediaMetricsTests {
    @Test func sumsWorkersIntoPrometheusText() {
        var a = RoomMediaCounters()
        a.rtpPacketsIn = 10
        a.forwarded = 20
        a.filtered.paused = 3
        a.filtered.otherLayer = 7
        a.dropped.waitingForKeyframe = 2
        a.failures.iceConsentExpired = 1
        a.failures.dtlsFingerprintMismatch = 2
        a.layerSwitchLatency.record(.milliseconds(180))
        a.layerSwitchLatency.record(.milliseconds(420))
        var b = RoomMediaCounters()
        b.rtpPacketsIn = 5
        b.filtered.paused = 1
        b.rtpBytesIn = 1200
        b.failures.dtlsFingerprintMismatch = 1
        b.dropped.duplicate = 2
        a.relayNACKsSent = 4
        b.relayRetransmissionsSent = 6
        let text = MediaMetrics.prometheus([
            MediaPlane.WorkerSnapshot(counters: a, transports: 2, tracks: 1, subscriptions: 3),
            MediaPlane.WorkerSnapshot(counters: b, transports: 1, tracks: 0, subscriptions: 0),
        ])
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.contains("swiftlet_rtp_packets_received_total 15"))
        #expect(lines.contains("swiftlet_forwarded_packets_total 20"))
        #expect(lines.contains("swiftlet_layer_filtered_packets_total{reason=\"paused\"} 4"))
        #expect(lines.contains("swiftlet_rtp_bytes_received_total 1200"))
        // Layer selection is not a drop: its reasons appear only under
        // the filter counter, real drops only under drops.
        #expect(lines.contains("swiftlet_layer_filtered_packets_total{reason=\"other_layer\"} 7"))
        #expect(!text.contains("swiftlet_dropped_packets_total{reason=\"other_layer\"}"))
        #expect(!text.contains("swiftlet_dropped_packets_total{reason=\"paused\"}"))
        #expect(!text.contains("swiftlet_dropped_packets_total{reason=\"temporal_layer_above\"}"))
        #expect(lines.contains("swiftlet_dropped_packets_total{reason=\"waiting_for_keyframe\"} 2"))
        #expect(lines.contains("swiftlet_ice_failures_total{reason=\"consent_expired\"} 1"))
        #expect(lines.contains("swiftlet_ice_failures_total{reason=\"connect_timeout\"} 0"))
        #expect(lines.contains("swiftlet_dtls_failures_total{reason=\"fingerprint_mismatch\"} 3"))
        #expect(lines.contains("swiftlet_dropped_packets_total{reason=\"duplicate\"} 2"))
        // A relay's repairs (between workers, and between nodes).
        #expect(lines.contains("swiftlet_relay_nacks_sent_total 4"))
        #expect(lines.contains("swiftlet_relay_retransmissions_sent_total 6"))
        #expect(lines.contains("swiftlet_media_transports 3"))
        #expect(lines.contains("swiftlet_tracks_published 1"))
        #expect(lines.contains("swiftlet_tracks_subscribed 3"))
        #expect(lines.contains("swiftlet_media_workers 2"))
        #expect(lines.contains("# TYPE swiftlet_tracks_published gauge"))
        // Histogram buckets are cumulative (180 ms in le=0.2, 420 ms in 0.5).
        #expect(lines.contains("swiftlet_layer_switch_seconds_bucket{le=\"0.1\"} 0"))
        #expect(lines.contains("swiftlet_layer_switch_seconds_bucket{le=\"0.2\"} 1"))
        #expect(lines.contains("swiftlet_layer_switch_seconds_bucket{le=\"0.5\"} 2"))
        #expect(lines.contains("swiftlet_layer_switch_seconds_bucket{le=\"+Inf\"} 2"))
        #expect(lines.contains("swiftlet_layer_switch_seconds_count 2"))
        #expect(lines.contains("swiftlet_layer_switch_seconds_sum 0.6"))
        // Every sample line has a HELP and TYPE for its metric name (a
        // histogram's samples carry suffixes).
        for line in lines where !line.hasPrefix("#") {
            var name = String(line.prefix { $0 != " " && $0 != "{" })
            for suffix in ["_bucket", "_sum", "_count"] where name.hasPrefix("swiftlet_layer_switch_seconds") {
                if name.hasSuffix(suffix) { name = String(name.dropLast(suffix.count)) }
            }
            #expect(lines.contains { $0.hasPrefix("# TYPE \(name) ") }, "\(name) has no TYPE")
        }
    }

    /// Prometheus naming (prometheus.io/docs/practices/naming): counters
    /// end in `_total`, a unit comes before it (`_bytes_received_total`
    /// beside `_packets_received_total`), and no name says `bytes` after
    /// its verb.
    /// ICE-TCP (RFC 6544): each worker's port, summed.
    @Test func sumsTheICETCPPorts() {
        var a = MediaPlane.WorkerSnapshot(counters: RoomMediaCounters(), transports: 0, tracks: 0, subscriptions: 0)
        var b = a
        a.iceTCP.accepted = 3
        a.iceTCP.sendBufferDrops = 7
        a.iceTCPConnections = 2
        b.iceTCP.accepted = 1
        b.iceTCP.bindingTimeouts = 1
        b.iceTCP.framesSent = 40
        b.iceTCPConnections = 1
        let lines = Set(MediaMetrics.prometheus([a, b]).split(separator: "\n").map(String.init))
        #expect(lines.contains("swiftlet_ice_tcp_connections_total{reason=\"accepted\"} 4"))
        #expect(lines.contains("swiftlet_ice_tcp_connections_total{reason=\"binding_timeout\"} 1"))
        #expect(lines.contains("swiftlet_ice_tcp_dropped_total{reason=\"send_buffer_full\"} 7"))
        #expect(lines.contains("swiftlet_ice_tcp_frames_sent_total 40"))
        #expect(lines.contains("swiftlet_ice_tcp_connections 3"))
    }

    @Test func namesFollowOneScheme() {
        let text = MediaMetrics.prometheus([
            MediaPlane.WorkerSnapshot(counters: RoomMediaCounters(), transports: 0, tracks: 0, subscriptions: 0)
        ])
        let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ") }
        #expect(types.count > 20)
        for t in types {
            let name = String(t[2])
            #expect(name.hasPrefix("swiftlet_"))
            if t[3] == "counter" { #expect(name.hasSuffix("_total"), "\(name)") }
            #expect(!name.hasSuffix("_received_bytes_total") && !name.hasSuffix("_sent_bytes_total"), "\(name)")
        }
        #expect(text.contains("swiftlet_rtp_bytes_received_total 0"))
        #expect(text.contains("swiftlet_rtp_bytes_sent_total 0"))
    }

    @Test func processMetricsArePlausible() throws {
        let sample = try #require(ProcessMetrics.sample())
        #expect(sample.residentBytes > 1 << 20)
        #expect(sample.openFDs >= 3)
        #expect(sample.maxFDs >= sample.openFDs)
        #expect(sample.cpuSeconds > 0)
        let now = Date().timeIntervalSince1970
        // This test process started within the last day, not in the future.
        #expect(sample.startTimeSeconds <= now + 1 && sample.startTimeSeconds > now - 86_400)
        let text = ProcessMetrics.prometheus()
        #expect(text.contains("# TYPE process_cpu_seconds_total counter"))
        #expect(text.contains("# TYPE process_resident_memory_bytes gauge"))
        #expect(text.contains("swiftlet_build_info{version=\"\(SwiftletVersion.string)\"} 1"))
        for name in ["process_open_fds", "process_max_fds", "process_start_time_seconds"] {
            #expect(text.contains("\n\(name) "), "\(name)")
        }
    }

    @Test func statFieldsCountFromTheCommandsClosingParenthesis() {
        // A command name with a space and a parenthesis (proc(5) field 2).
        var fields = ["S"] + (4...52).map(String.init)
        fields[14 - 3] = "250"
        fields[15 - 3] = "50"
        fields[22 - 3] = "1000"
        fields[24 - 3] = "300"
        let line = "1234 (a b) c) " + fields.joined(separator: " ") + "\n"
        let parsed = ProcessMetrics.parseStat(line)
        #expect(parsed?.utime == 250)
        #expect(parsed?.stime == 50)
        #expect(parsed?.startTicks == 1000)
        #expect(parsed?.rssPages == 300)
        #expect(ProcessMetrics.parseStat("garbage") == nil)
        #expect(ProcessMetrics.parseStat("1 (x) S 1 2") == nil)
    }
}
