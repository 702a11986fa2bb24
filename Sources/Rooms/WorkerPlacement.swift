/// One media worker's load as the shell last read it (its published
/// snapshot, never a call into the worker).
package struct WorkerLoad: Equatable, Sendable {
    /// Peer transports the worker holds.
    package var transports: Int
    /// Packets it forwarded per second, over its last snapshot interval.
    package var forwardedPacketsPerSecond: Double
    package init(transports: Int, forwardedPacketsPerSecond: Double) {
        self.transports = transports
        self.forwardedPacketsPerSecond = forwardedPacketsPerSecond
    }
}

/// Which media worker a participant's transports go on
/// (docs/ARCHITECTURE.md, "Rooms over every worker"). Sans-IO: the caller
/// gives the loads.
///
/// The rule: a room's participants share the room's first worker (chosen
/// when the room is made, as the least-loaded worker) while the room has
/// at most `spreadAfter` participants with media and that worker is not
/// clearly more loaded than the least-loaded one; otherwise the new
/// participant goes to the least-loaded worker. A small room thus never
/// pays a cross-thread hop, and a large one (a webinar's viewers) spreads
/// over every core. `spreadAfter` 0 or 1 places every participant by load.
///
/// A worker's load is its forwarded packets per second plus
/// `transportWeight` per transport: a transport just opened has carried
/// nothing yet but soon will (a 1 Mbit/s video is about 100 packets/s, a
/// participant two transports), and counting it at once keeps a burst of
/// joins from all landing on the worker that was idle a snapshot ago. The
/// transport count is the larger of the worker's snapshot and what the
/// directory itself opened there (the snapshot lags by up to its
/// interval). "Clearly more loaded": more than `margin` times the least
/// load plus `spillSlack` (5,000 packets/s, about a hundred transports'
/// weight). The slack is absolute on purpose: next to an idle worker any
/// room with traffic is infinitely busier, and a relative rule alone would
/// split every small room the moment its media starts (a subscriber placed
/// on another worker costs a cross-thread hop per packet for nothing).
/// Ties go to the lowest index.
package struct WorkerPlacement: Equatable, Sendable {
    package var spreadAfter: Int
    package var transportWeight: Double = 50
    package var margin: Double = 2
    package var spillSlack: Double = 5000

    package init(spreadAfter: Int = 8) { self.spreadAfter = spreadAfter }

    /// The load of each of `workers` workers: `loads` (nil or short: zero)
    /// with the transports the directory opened on each.
    package func scores(workers: Int, loads: [WorkerLoad]?, placed: [Int: Int]) -> [Double] {
        (0..<max(1, workers)).map { w in
            let load = loads.flatMap { w < $0.count ? $0[w] : nil }
            let transports = max(load?.transports ?? 0, placed[w] ?? 0)
            return max(0, load?.forwardedPacketsPerSecond ?? 0) + transportWeight * Double(transports)
        }
    }

    /// The least-loaded worker; on a tie the first from `start` on (in
    /// turn: new rooms on idle workers go round-robin).
    package func leastLoaded(_ scores: [Double], startingAt start: Int = 0) -> Int {
        guard !scores.isEmpty else { return 0 }
        let first = ((start % scores.count) + scores.count) % scores.count
        var best = first
        for i in 1..<max(1, scores.count) {
            let w = (first + i) % scores.count
            if scores[w] < scores[best] { best = w }
        }
        return best
    }

    /// Where a room's next participant goes: `roomWorker` is the room's
    /// first worker, `roomParticipants` those of the room already placed.
    package func place(roomWorker: Int, roomParticipants: Int, scores: [Double]) -> Int {
        guard scores.count > 1 else { return 0 }
        let first = min(max(0, roomWorker), scores.count - 1)
        let least = leastLoaded(scores)
        let crowded = scores[first] > margin * scores[least] + spillSlack
        if spreadAfter > 1, roomParticipants < spreadAfter, !crowded { return first }
        return least
    }
}
