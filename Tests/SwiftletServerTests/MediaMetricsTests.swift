import MediaWorker
import Testing

@testable import SwiftletServer

@Suite struct MediaMetricsTests {
    @Test func sumsWorkersIntoPrometheusText() {
        var a = RoomMediaCounters()
        a.rtpPacketsIn = 10
        a.forwarded = 20
        a.dropped.paused = 3
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
        // Every sample line has a HELP and TYPE for its metric name.
        for line in lines where !line.hasPrefix("#") {
            let name = String(line.prefix { $0 != " " && $0 != "{" })
            #expect(lines.contains { $0.hasPrefix("# TYPE \(name) ") }, "\(name) has no TYPE")
        }
    }
}
