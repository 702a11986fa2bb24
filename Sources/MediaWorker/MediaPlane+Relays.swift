import MediaRouter
import NetIO
import RoomProtocol
import Rooms
import Synchronization
import Wire
import WorkerRelay

/// The rings between a plane's workers (docs/ARCHITECTURE.md, "Rooms over
/// every worker"): for each ordered pair (from, to), a media ring that
/// carries the tracks whose source is `from` to `to`, and a feedback ring
/// that carries `from`'s feedback about tracks whose source is `to`. Each
/// ring has one producer thread (`from`'s) and one consumer thread
/// (`to`'s), as `PacketRing` requires.
///
/// Per loop turn of worker `w` (`turn`): drain each incoming ring, at most
/// `drainLimit` messages each, into the engine's `receiveRelayed*` and
/// `receiveRelayFeedback`; then wake, once, every worker `w` pushed to
/// during the turn (its mailbox eventfd): one wake per producer turn,
/// never one per packet.
package final class RelayMesh: Sendable {
    package let workerCount: Int
    /// `media[from][to]`, nil where from == to.
    let media: [[RingRelaySourceLink?]]
    /// `feedback[from][to]`: from's feedback about to's tracks.
    let feedback: [[RingRelayFeedbackLink?]]
    /// Per consumer worker.
    let drained: [RelayDrainCounters]

    /// Slots per media ring: a burst of this many packets from one source
    /// worker waits for the far worker's next turn before drops begin.
    package static let mediaSlots = 512
    package static let feedbackSlots = 256
    /// Messages drained per ring per turn: the UDP socket drains at most
    /// 16 x 32 datagrams a turn, so a flooding ring cannot starve the
    /// socket, the timers or the mailbox.
    package static let drainLimit = 256

    /// `packetBytes`: the largest packet a media slot carries (the
    /// worker's datagram slot: nothing larger was received).
    package init(workers: Int, packetBytes: Int = 2048) {
        workerCount = workers
        let mediaSlot = RelayMessage.slotSize(forPacketsUpTo: packetBytes)
        media = (0..<workers).map { from in
            (0..<workers).map { to in
                from == to ? nil : RingRelaySourceLink(ring: PacketRing(capacity: Self.mediaSlots, slotSize: mediaSlot))
            }
        }
        feedback = (0..<workers).map { from in
            (0..<workers).map { to in
                from == to
                    ? nil
                    : RingRelayFeedbackLink(
                        ring: PacketRing(capacity: Self.feedbackSlots, slotSize: RelayMessage.slotSize(forPacketsUpTo: 0)))
            }
        }
        drained = (0..<workers).map { _ in RelayDrainCounters() }
    }

    /// What worker `w` sends on: its links to every other worker.
    func links(of w: Int) -> (sources: [(any RelaySourceLink)?], feedback: [(any RelayFeedbackLink)?]) {
        (media[w].map { $0 }, feedback[w].map { $0 })
    }

    /// On worker `w`'s thread, once per loop turn; true when a ring still
    /// holds messages past the drain limit.
    func turn(
        worker w: Int, engine: RoomMediaEngine, now: Instant, transmit: TransmitQueue, wake: (Int) -> Void
    ) -> Bool {
        let counters = drained[w]
        var more = false
        for from in 0..<workerCount where from != w {
            if let ring = media[from][w]?.ring {
                let (read, malformed) = ring.drainMessages(limit: Self.drainLimit) { message in
                    switch message {
                    case .media(let track, let layer, let isRetransmission, let packet):
                        engine.receiveRelayedMedia(
                            track, layer: layer, isRetransmission: isRetransmission, packet: packet, from: from, now: now,
                            transmit: transmit)
                    case .senderReport(let track, let layer, let ntp, let rtpTimestamp):
                        engine.receiveRelayedSenderReport(
                            track, layer: layer, ntp: ntp, rtpTimestamp: rtpTimestamp, from: from, now: now)
                    case .layerBitrates(let track, let rates):
                        engine.receiveRelayedLayerBitrates(track, rates, from: from, now: now)
                    case .feedback:
                        // Feedback has its own ring; here it is a bad slot.
                        counters.bump(counters.malformed)
                    }
                }
                counters.add(counters.media, read - malformed)
                counters.add(counters.malformed, malformed)
                if read == Self.drainLimit { more = true }
            }
            if let ring = feedback[from][w]?.ring {
                let (read, malformed) = ring.drainMessages(limit: Self.drainLimit) { message in
                    if case .feedback(let f) = message {
                        engine.receiveRelayFeedback(f, from: from, now: now, transmit: transmit)
                    } else {
                        counters.bump(counters.malformed)
                    }
                }
                counters.add(counters.feedback, read - malformed)
                counters.add(counters.malformed, malformed)
                if read == Self.drainLimit { more = true }
            }
        }
        for to in 0..<workerCount where to != w {
            // Both flags are taken: each is cleared for the next turn.
            let m = media[w][to]?.takeWake() ?? false
            let f = feedback[w][to]?.takeWake() ?? false
            if m || f {
                wake(to)
                counters.bump(counters.wakesSent)
            }
        }
        return more
    }

    /// Worker `w`'s relay counts as of now (any thread).
    package func counts(of w: Int) -> RelayCounts {
        var c = RelayCounts()
        for to in 0..<workerCount where to != w {
            if let link = media[w][to] {
                let v = link.counters.values
                c.mediaSent &+= v.sent
                c.mediaDroppedFull &+= v.droppedFull
                c.mediaRefused &+= v.refused
            }
            if let link = feedback[w][to] {
                let v = link.counters.values
                c.feedbackSent &+= v.sent
                c.feedbackDropped &+= v.droppedFull &+ v.refused
            }
        }
        let d = drained[w]
        c.mediaReceived = d.media.load(ordering: .relaxed)
        c.feedbackReceived = d.feedback.load(ordering: .relaxed)
        c.malformed = d.malformed.load(ordering: .relaxed)
        c.wakesSent = d.wakesSent.load(ordering: .relaxed)
        return c
    }
}

/// One worker's traffic over the relay rings, for `/metrics`.
package struct RelayCounts: Equatable, Sendable {
    /// Media and sender-report messages pushed to other workers.
    package var mediaSent: UInt64 = 0
    /// Dropped because the far worker's ring was full (it is behind).
    package var mediaDroppedFull: UInt64 = 0
    /// Refused before the ring (a packet longer than a slot).
    package var mediaRefused: UInt64 = 0
    package var feedbackSent: UInt64 = 0
    package var feedbackDropped: UInt64 = 0
    /// Drained from other workers' rings into this worker's engine.
    package var mediaReceived: UInt64 = 0
    package var feedbackReceived: UInt64 = 0
    /// Slots that did not decode (never expected: both ends are ours).
    package var malformed: UInt64 = 0
    /// Eventfd wakes this worker sent to others: at most one per other
    /// worker per loop turn.
    package var wakesSent: UInt64 = 0
    package init() {}
}

/// Written by the consumer worker's thread only (a relaxed load and store).
final class RelayDrainCounters: Sendable {
    let media = Atomic<UInt64>(0)
    let feedback = Atomic<UInt64>(0)
    let malformed = Atomic<UInt64>(0)
    let wakesSent = Atomic<UInt64>(0)

    @inline(__always)
    func bump(_ counter: borrowing Atomic<UInt64>) { add(counter, 1) }

    @inline(__always)
    func add(_ counter: borrowing Atomic<UInt64>, _ n: Int) {
        guard n > 0 else { return }
        counter.store(counter.load(ordering: .relaxed) &+ UInt64(n), ordering: .relaxed)
    }
}

extension MediaPlane {
    /// Before the worker threads start: each engine's links, posted first
    /// in its mailbox so that `connectRelays` runs before any relay
    /// command, and each worker's per-turn drain and wakes.
    static func connect(_ mesh: RelayMesh, _ workers: [UDPWorker<RoomMediaEngine>], engines: [RoomMediaEngine]) {
        let mailboxes = workers.map(\.mailbox)
        for (w, (worker, engine)) in zip(workers, engines).enumerated() {
            worker.mailbox.post { engine, _, _ in
                let (sources, feedback) = mesh.links(of: w)
                engine.connectRelays(sources: sources, feedback: feedback)
            }
            guard workers.count > 1 else { continue }
            worker.onTurn = { now, transmit in
                mesh.turn(worker: w, engine: engine, now: now, transmit: transmit) { mailboxes[$0].wake() }
            }
        }
    }

    /// Fans `command` out over the workers that hold a part of its room
    /// (`RoomSpanPlanner`) and posts each part to its worker's mailbox. The
    /// planner runs under its lock, so the commands of one room reach each
    /// worker in the order the rooms layer issued them.
    func postPlanned(_ command: MediaCommand) {
        planner.withLock { planner in
            for planned in plan(command, with: &planner) { post(planned) }
        }
    }

    /// One planned command to its worker's mailbox.
    func post(_ planned: PlannedCommand) {
        let part = planned.command
        workers[planned.worker].mailbox.post { engine, now, transmit in
            engine.execute(part, now: now, transmit: transmit)
        }
    }

    /// The planner's commands for `command`, a cascade command's node
    /// resolved to its relay slot first (`nodeRelaySlots`). A command
    /// naming a node without a slot (not in the last `setNodeRelays`) is
    /// ignored and counted (`nodeCommandsWithoutSlot`): the cluster layer
    /// applies only the remote state of nodes it relays to, so one that
    /// has just gone costs at most its commands.
    func plan(_ command: MediaCommand, with planner: inout RoomSpanPlanner) -> [PlannedCommand] {
        guard let node = command.relayNode else { return planner.plan(command) }
        guard let slot = nodeRelaySlots.withLock({ $0[node] }) else {
            nodeCommandsWithoutSlot.add(1, ordering: .relaxed)
            return []
        }
        return planner.plan(command, nodeSlot: slot)
    }

    /// Every worker's relay counts (any thread; atomics only).
    package func relayCounts() -> [RelayCounts] { (0..<workers.count).map { relays.counts(of: $0) } }
}
