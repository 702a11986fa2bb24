import NetIO
import RoomProtocol
import Rooms
import Synchronization
import Wire

/// Each worker's load for placing participants (`Rooms.WorkerPlacement`),
/// read from the workers' published snapshots (`MediaPlane.snapshots`),
/// never from the workers themselves: a busy worker does not slow a join.
/// The forwarded-packet rate is the counter's growth between two reads at
/// least `minimumInterval` apart; a read sooner returns the last rate.
package final class WorkerLoadMeter: Sendable {
    private let plane: MediaPlane
    private let minimumInterval: Duration
    private let last = Mutex<Sample?>(nil)

    struct Sample {
        var at: Instant
        var forwarded: [UInt64]
        var rates: [Double]
    }

    package init(plane: MediaPlane, minimumInterval: Duration = .milliseconds(250)) {
        self.plane = plane
        self.minimumInterval = minimumInterval
    }

    /// Any thread; takes only this meter's lock and the snapshot cells'.
    package func read() -> [WorkerLoad] {
        let snapshots = plane.snapshots()
        let now = MonotonicClock.now()
        let forwarded = snapshots.map(\.counters.forwarded)
        let rates: [Double] = last.withLock { sample in
            guard let previous = sample, previous.forwarded.count == forwarded.count else {
                sample = Sample(at: now, forwarded: forwarded, rates: forwarded.map { _ in 0 })
                return sample!.rates
            }
            let elapsed = now - previous.at
            guard elapsed >= minimumInterval else { return previous.rates }
            let seconds = Double(elapsed.nanoseconds) / 1e9
            let rates = zip(forwarded, previous.forwarded).map { now, before in
                now >= before ? Double(now - before) / seconds : 0
            }
            sample = Sample(at: now, forwarded: forwarded, rates: rates)
            return rates
        }
        return zip(snapshots, rates).map { WorkerLoad(transports: $0.transports, forwardedPacketsPerSecond: $1) }
    }
}
