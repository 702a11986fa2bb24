import PeerSession
import SRTP
import Wire

/// Identifies a transport within its worker.
package struct TransportID: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt64
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }
    package var description: String { "t\(rawValue)" }
}

/// Owns one worker's peer transports: routes each datagram of the shared
/// port to its transport (`PeerRouter`), writes what the transports queue
/// into the output it is given, drives their timers, and hands decrypted
/// media to `onMedia` (the room router, or a test). Sans-IO: the worker
/// shell (MediaWorker) makes it a NetIO `WorkerEngine`; everything runs on
/// the worker thread.
package final class TransportEngine {

    /// Decrypted media: the transport, what it is, and the buffer holding
    /// it (valid only during the call; may be rewritten in place).
    package var onMedia: ((TransportID, ReceivedDatagram, UnsafeMutableRawBufferPointer, Instant, any DatagramOutput) -> Void)?
    /// Transport events; after `.failed` or `.closed` the transport is gone.
    package var onEvent: ((TransportID, PeerTransportEvent) -> Void)?

    /// One transport and its place in the timer heap. A class so the
    /// engine's lists and its dictionary share one record, updated in place.
    private final class Slot {
        let id: TransportID
        let transport: PeerTransport
        /// Set from the engine's counter whenever the deadline changes:
        /// older heap entries of this transport (or of an earlier transport
        /// under the same id) are stale.
        var generation: UInt64 = 0
        /// The deadline the heap holds for this transport (nil: none).
        var scheduled: Instant?
        var needsSchedule = false
        var needsFlush = false
        var isRemoved = false
        init(id: TransportID, transport: PeerTransport) {
            self.id = id
            self.transport = transport
        }
    }

    private var transports: [TransportID: Slot] = [:]
    private var router = PeerRouter<TransportID>()
    private var timers = TransportTimerHeap()
    /// Transports driven since their deadline was last read (received a
    /// STUN/DTLS datagram, timed out, added, or handed out by
    /// `transport(_:)`): only these are re-examined by `nextDeadline()`.
    private var unscheduled: [Slot] = []
    /// Transports handed out by `transport(_:)` or added since the last
    /// `flushAll`: only these may hold output nobody flushed.
    private var unflushed: [Slot] = []
    private var dueScratch: [Slot] = []
    /// Engine-wide, so generations never repeat across transports that
    /// share an id over time.
    private var lastGeneration: UInt64 = 0
    package private(set) var droppedDatagrams = 0
    /// Packets the transports dropped at their SSRC cap
    /// (`PeerTransportCounters.ssrcLimitExceeded`), summed here so they
    /// outlive the transports.
    package private(set) var ssrcLimitDrops: UInt64 = 0
    /// Transports whose deadline was read or who were timed out, plus heap
    /// entries popped: the work of the timer path, which tests bound
    /// independently of how many transports the engine holds.
    package private(set) var timerVisits: UInt64 = 0

    package init() {}

    /// `boundTo`: the peer's address, known in advance (a relay to another
    /// node, `PeerRouter.bind`): datagrams from it reach this transport
    /// before any check validated it.
    package func add(_ transport: PeerTransport, id: TransportID, boundTo peer: TransportAddress? = nil) {
        if let old = transports[id] { old.isRemoved = true }
        let slot = Slot(id: id, transport: transport)
        transports[id] = slot
        router.register(id, localUfrag: transport.localCredentials.ufrag)
        if let peer { router.bind(peer, to: id) }
        markDriven(slot, flush: true)
    }

    /// The transport `id`, for a caller that may drive it (remote
    /// parameters, close): its deadline is read again and its output
    /// flushed at the next `flushAll`.
    package func transport(_ id: TransportID) -> PeerTransport? {
        guard let slot = transports[id] else { return nil }
        markDriven(slot, flush: true)
        return slot.transport
    }

    /// The state of transport `id`, read without driving it.
    package func state(of id: TransportID) -> PeerTransport.State? { transports[id]?.transport.state }

    package var transportCount: Int { transports.count }
    package var routerCounters: PeerRouter<TransportID>.Counters { router.counters }

    package func remove(_ id: TransportID) {
        // Its heap entries stay until they reach the top, then are skipped.
        transports.removeValue(forKey: id)?.isRemoved = true
        router.remove(id)
    }

    private func markDriven(_ slot: Slot, flush: Bool) {
        if !slot.needsSchedule {
            slot.needsSchedule = true
            unscheduled.append(slot)
        }
        if flush, !slot.needsFlush {
            slot.needsFlush = true
            unflushed.append(slot)
        }
    }

    /// Copies `packet` into a transmit slot, protects it there for `id`'s
    /// peer and queues it: one copy, no allocation. False when the
    /// transport has no route (not connected, consent lost).
    @discardableResult
    package func sendRTP(
        _ packet: UnsafeRawBufferPointer, to id: TransportID, rtcp: Bool = false, output: any DatagramOutput
    ) -> Bool {
        guard let transport = transports[id]?.transport, let destination = transport.selectedAddress else { return false }
        var sent = false
        output.send(to: destination, from: transport.selectedLocalAddress) { slot in
            let room = rtcp ? SRTPSession.rtcpTrailerRoom : SRTPSession.rtpTrailerRoom
            guard packet.count + room <= slot.count else { return 0 }
            slot.copyMemory(from: packet)
            let result =
                rtcp ? transport.protectRTCP(slot, length: packet.count) : transport.protectRTP(slot, length: packet.count)
            guard let result, result.to == destination else { return 0 }
            sent = true
            return result.length
        }
        return sent
    }

    // MARK: Input

    package func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?,
        now: Instant, output: any DatagramOutput
    ) {
        guard let id = router.route(UnsafeRawBufferPointer(datagram), from: source), let slot = transports[id] else {
            droppedDatagrams += 1
            return
        }
        let transport = slot.transport
        let refusedBefore = transport.counters.ssrcLimitExceeded
        let result = transport.receive(datagram, from: source, to: local, now: now)
        ssrcLimitDrops &+= UInt64(transport.counters.ssrcLimitExceeded - refusedBefore)
        if transport.isValidated(source) { router.noteValidated(source, by: id) }
        switch result {
        case .handled:
            // STUN or DTLS (or a dropped packet): only these move the
            // transport's timers; SRTP and SRTCP never do.
            markDriven(slot, flush: false)
            flush(id, transport, output: output)
        case .rtp, .rtcp: onMedia?(id, result, datagram, now, output)
        }
    }

    /// A transport still holds `address` as validated: an ICE-TCP
    /// connection from it stays open only while this is true.
    package func hasValidated(_ address: TransportAddress) -> Bool {
        guard let id = router.owner(of: address), let transport = transports[id]?.transport else { return false }
        return transport.isValidated(address)
    }

    /// Times out the transports whose deadline has come, in deadline
    /// order, each once per call (a transport still due after its timeout
    /// waits for the next call).
    package func timeout(now: Instant, output: any DatagramOutput) {
        schedule()
        dueScratch.removeAll(keepingCapacity: true)
        while let top = timers.minimum, top.deadline <= now {
            timers.popMinimum()
            timerVisits &+= 1
            guard let slot = transports[top.id], !slot.isRemoved, slot.generation == top.generation else { continue }
            slot.scheduled = nil
            dueScratch.append(slot)
        }
        for slot in dueScratch where !slot.isRemoved {
            timerVisits &+= 1
            slot.transport.handleTimeout(now: now)
            markDriven(slot, flush: false)
            flush(slot.id, slot.transport, output: output)
        }
        dueScratch.removeAll(keepingCapacity: true)
    }

    /// The earliest transport deadline: reads the deadlines of the
    /// transports driven since the last call, then the heap's top (after
    /// dropping stale entries).
    package func nextDeadline() -> Instant? {
        schedule()
        while let top = timers.minimum {
            if let slot = transports[top.id], !slot.isRemoved, slot.generation == top.generation { return top.deadline }
            timers.popMinimum()
            timerVisits &+= 1
        }
        return nil
    }

    /// Reads the deadline of every driven transport and pushes it where it
    /// changed.
    private func schedule() {
        guard !unscheduled.isEmpty else { return }
        for slot in unscheduled {
            slot.needsSchedule = false
            guard !slot.isRemoved else { continue }
            timerVisits &+= 1
            let deadline = slot.transport.nextDeadline
            guard deadline != slot.scheduled else { continue }
            lastGeneration &+= 1
            slot.generation = lastGeneration
            slot.scheduled = deadline
            if let deadline {
                timers.push(TransportTimerHeap.Entry(deadline: deadline, id: slot.id, generation: slot.generation))
            }
        }
        unscheduled.removeAll(keepingCapacity: true)
        if timers.needsCompaction(live: transports.count) {
            timers.rebuild(
                transports.values.lazy.compactMap { slot in
                    slot.scheduled.map { TransportTimerHeap.Entry(deadline: $0, id: slot.id, generation: slot.generation) }
                })
        }
    }

    /// Sends what the transports handed out since the last call queued
    /// (commands drive them through `transport(_:)`) and reports their
    /// events; the others were flushed when they were driven.
    package func flushAll(output: any DatagramOutput) {
        while let slot = unflushed.popLast() {
            slot.needsFlush = false
            guard !slot.isRemoved else { continue }
            flush(slot.id, slot.transport, output: output)
        }
    }

    /// Sends what `transport` queued and reports its events.
    package func flush(_ id: TransportID, _ transport: PeerTransport, output: any DatagramOutput) {
        // Straight from the transport's buffers into transmit slots: a
        // consent check's response is never an array here (issue #14).
        transport.sendTransmits { bytes, to, from in output.send(bytes, to: to, from: from) }
        while let event = transport.pollEvent() {
            onEvent?(id, event)
            switch event {
            case .failed, .closed: remove(id)
            default: break
            }
        }
    }
}
