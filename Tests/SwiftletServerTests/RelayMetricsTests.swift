import MediaWorker
import Testing

@testable import SwiftletServer

@Suite struct RelayMetricsTests {
    @Test func relayCountsAreSummedOverWorkers() {
        var a = RelayCounts()
        a.mediaSent = 100
        a.mediaDroppedFull = 3
        a.wakesSent = 7
        var b = RelayCounts()
        b.mediaSent = 20
        b.mediaReceived = 97
        b.feedbackDropped = 1
        let lines = Set(MediaMetrics.relayPrometheus([a, b]).split(separator: "\n").map(String.init))
        #expect(lines.contains("swiftlet_relay_packets_sent_total 120"))
        #expect(lines.contains("swiftlet_relay_packets_received_total 97"))
        #expect(lines.contains("swiftlet_relay_ring_drops_total 3"))
        #expect(lines.contains("swiftlet_relay_feedback_dropped_total 1"))
        #expect(lines.contains("swiftlet_relay_wakes_total 7"))
        #expect(lines.contains("# TYPE swiftlet_relay_ring_drops_total counter"))
    }
}
