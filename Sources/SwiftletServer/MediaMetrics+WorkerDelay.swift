import NetIO

extension MediaMetrics {
    /// How long the media workers held what they sent in answer to a
    /// received datagram (`WorkerDelayHistogram`: `recvmmsg` to `sendmmsg`,
    /// forwarded copies included), summed over workers, as a Prometheus
    /// histogram in seconds. Packets a worker got from another worker's
    /// ring are not in it: the ring hop is counted by neither side.
    static func workerDelayPrometheus(_ histograms: [WorkerDelayHistogram]) -> String {
        var all = WorkerDelayHistogram()
        for h in histograms { all.merge(h) }
        let name = "swiftlet_worker_delay_seconds"
        var out = "# HELP \(name) Time from recvmmsg returning a datagram to sendmmsg taking each datagram sent in answer.\n"
        out += "# TYPE \(name) histogram\n"
        var cumulative: UInt64 = 0
        for (i, bound) in WorkerDelayHistogram.boundsMicroseconds.enumerated() {
            cumulative &+= all.counts[i]
            out += "\(name)_bucket{le=\"\(Double(bound) / 1_000_000)\"} \(cumulative)\n"
        }
        out += "\(name)_bucket{le=\"+Inf\"} \(all.total)\n"
        out += "\(name)_sum \(Double(all.sumNanoseconds) / 1_000_000_000)\n"
        out += "\(name)_count \(all.total)\n"
        return out
    }
}
