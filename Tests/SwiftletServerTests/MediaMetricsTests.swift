import MediaWorker
import Testing

@testable import SwiftletServer

@Suite struct MediaMetricsTests {
    @Test func sumsWorkersIntoPrometheusText() {
        var a = RoomMediaCounters()
        a.rtpPacketsIn = 10
        a.forwarded = 20
        a.dropped.paused = 3
        a.layerSwitchLatency.record(.milliseconds(180))
        a.layerSwitchLatency.record(.milliseconds(420))
        var b = RoomMediaCounters()
        b.rtpPacketsIn = 5
        b.dropped.paused = 1
        b.dropped.duplicate = 2
        let text = MediaMetrics.prometheus([
            MediaPlane.WorkerSnapshot(counters: a, transports: 2, tracks: 1, subscriptions: 3),
            MediaPlane.WorkerSnapshot(counters: b, transports: 1, tracks: 0, subscriptions: 0),
        ])
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.contains("swiftlet_rtp_packets_received_total 15"))
        #expect(lines.contains("swiftlet_forwarded_packets_total 20"))
        #expect(lines.contains("swiftlet_dropped_packets_total{reason=\"paused\"} 4"))
        #expect(lines.contains("swiftlet_dropped_packets_total{reason=\"duplicate\"} 2"))
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
}
