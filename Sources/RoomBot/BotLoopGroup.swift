import NetIO
import Synchronization
import Wire

/// `--threads N` (issue #14): the bots dealt round robin over N `BotLoop`s,
/// each with its own `BotContext` (buffers, epoll registration) on its
/// own thread, so a bigger load machine drives a bigger server. A bot is
/// touched by its loop's thread only, until `run` has joined them all;
/// then the caller reads every record.
final class BotLoopGroup {
    let loops: [BotLoop]
    /// Each loop's latest progress sample; the first loop merges and prints.
    private let board: ProgressBoard

    /// `makeContext` gives each loop its own context; `progress` prints
    /// the merged line (called on the first loop's thread).
    init(
        bots: [Bot], threads: Int, ramp: Double, start: Instant, makeContext: (Int) -> BotContext,
        progress: @escaping (LiveProgress.Sample, Instant) -> Void
    ) {
        let n = max(1, min(threads, bots.count))
        let shares = Self.deal(bots.count, over: n)
        let board = ProgressBoard(count: n)
        self.board = board
        var loops: [BotLoop] = []
        for (index, share) in shares.enumerated() {
            let loopBots = share.map { bots[$0] }
            let context = makeContext(index)
            for bot in loopBots { bot.context = context }
            var live = LiveProgress(start: start)
            loops.append(
                BotLoop(context: context, bots: loopBots, ramp: ramp / Double(n)) { now in
                    let mine = live.sample(loopBots.map(\.record), now: now)
                    let merged = board.samples.withLock { all -> LiveProgress.Sample? in
                        all[index] = mine
                        return index == 0 ? LiveProgress.Sample.merged(all.compactMap { $0 }) : nil
                    }
                    if let merged { progress(merged, now) }
                })
        }
        self.loops = loops
    }

    /// Which bots (by index) each of `n` loops runs: bot i on loop i % n,
    /// so every loop gets publishers and subscribers of every room.
    static func deal(_ count: Int, over n: Int) -> [[Int]] {
        (0..<n).map { loop in Array(stride(from: loop, to: count, by: n)) }
    }

    /// Runs every loop to its end and shuts it down, the first on the
    /// calling thread; returns when all are done, with the instant the
    /// first loop's run ended (before its shutdown grace).
    func run(start: Instant) -> Instant {
        let threads = loops.dropFirst().enumerated().map { i, loop in
            let box = LoopBox(loop)
            return WorkerThread(name: "roombot-\(i + 1)") {
                box.loop.run(start: start)
                box.loop.shutdown()
            }
        }
        loops[0].run(start: start)
        let end = MonotonicClock.now()
        loops[0].shutdown()
        for t in threads { t.join() }
        return end
    }
}

/// The loops' progress samples, shared between their threads.
private final class ProgressBoard: Sendable {
    let samples: Mutex<[LiveProgress.Sample?]>
    init(count: Int) { samples = Mutex([LiveProgress.Sample?](repeating: nil, count: count)) }
}

/// A loop handed to its thread: only that thread touches it (and its bots)
/// until the join.
private final class LoopBox: @unchecked Sendable {
    let loop: BotLoop
    init(_ loop: BotLoop) { self.loop = loop }
}

extension LiveProgress.Sample {
    /// The loops' samples as one: counts and rates add up, loss is weighted
    /// by each loop's received rate.
    static func merged(_ parts: [Self]) -> Self {
        var m = Self(joined: 0, bots: 0, connected: 0, announced: 0, flowing: 0, mbps: 0, lossPercent: 0, errors: 0)
        var weighted = 0.0
        for p in parts {
            m.joined += p.joined
            m.bots += p.bots
            m.connected += p.connected
            m.announced += p.announced
            m.flowing += p.flowing
            m.mbps += p.mbps
            m.errors += p.errors
            m.publishing = m.publishing || p.publishing
            m.sentMbps += p.sentMbps
            weighted += p.lossPercent * max(p.mbps, 1e-9)
        }
        let total = parts.reduce(0) { $0 + max($1.mbps, 1e-9) }
        m.lossPercent = parts.isEmpty ? 0 : weighted / total
        return m
    }
}
