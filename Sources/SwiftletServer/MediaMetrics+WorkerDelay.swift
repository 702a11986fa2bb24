import NetIO
import Wire

extension MediaMetrics {
    /// How long the media workers held what they sent in answer to a
    /// received datagram (`recvmmsg` to `sendmmsg`, forwarded copies
    /// included), summed over workers. Packets a worker got from another
    /// worker's ring are not in it: the ring hop is counted by neither side.
    static func workerDelayPrometheus(_ histograms: [DurationHistogram]) -> String {
        var all = DurationHistogram(.workerDelay)
        for h in histograms { all.merge(h) }
        return all.prometheus(
            "swiftlet_worker_delay_seconds",
            help: "Time from recvmmsg returning a datagram to sendmmsg taking each datagram sent in answer.")
    }
}

extension MediaMetrics {
    /// Datagrams each worker's kernel socket dropped because its receive
    /// buffer was full (`--udp-receive-buffer`): input lost before the
    /// worker saw it, which no other counter shows.
    static func receiveBufferDropsPrometheus(_ drops: [UInt64?]) -> String {
        var out =
            "# HELP swiftlet_udp_receive_buffer_drops_total Datagrams dropped by the kernel with a worker socket's receive buffer full.\n"
        out += "# TYPE swiftlet_udp_receive_buffer_drops_total counter\n"
        for (i, d) in drops.enumerated() {
            guard let d else { continue }
            out += "swiftlet_udp_receive_buffer_drops_total{worker=\"\(i)\"} \(d)\n"
        }
        return out
    }
}

extension DurationHistogram {
    /// A Prometheus histogram in seconds: cumulative buckets by upper bound
    /// (`le`), `+Inf`, `_sum` and `_count`.
    func prometheus(_ name: String, help: String) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        var cumulative: UInt64 = 0
        for i in 0..<buckets.count {
            cumulative &+= count(inBucket: i)
            out += "\(name)_bucket{le=\"\(Double(buckets.bound(i)) / 1e9)\"} \(cumulative)\n"
        }
        out += "\(name)_bucket{le=\"+Inf\"} \(total)\n"
        out += "\(name)_sum \(Double(sumNanoseconds) / 1e9)\n"
        out += "\(name)_count \(total)\n"
        return out
    }
}
