import NetIO
import PeerSession
import SRTP
import Wire

/// Identifies a transport within its worker.
public struct TransportID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "t\(rawValue)" }
}

/// The `WorkerEngine` that owns one worker's peer transports: routes each
/// datagram of the shared port to its transport (`PeerRouter`), sends what
/// the transports queue, drives their timers, and hands decrypted media to
/// `onMedia` (the rooms layer, or a test). Everything runs on the worker
/// thread; control arrives as closures through the worker's mailbox.
public final class TransportEngine: WorkerEngine {
    /// Runs on the worker thread with the engine and the current time.
    public typealias Control = @Sendable (TransportEngine, Instant, TransmitQueue) -> Void

    /// Decrypted media: the transport, what it is, and the buffer holding
    /// it (valid only during the call; may be rewritten in place).
    public var onMedia: ((TransportID, ReceivedDatagram, UnsafeMutableRawBufferPointer, Instant, TransmitQueue) -> Void)?
    /// Transport events; after `.failed` or `.closed` the transport is gone.
    public var onEvent: ((TransportID, PeerTransportEvent) -> Void)?

    private var transports: [TransportID: PeerTransport] = [:]
    private var router = PeerRouter<TransportID>()
    public private(set) var droppedDatagrams = 0
    /// Packets the transports dropped at their SSRC cap
    /// (`PeerTransportCounters.ssrcLimitExceeded`), summed here so they
    /// outlive the transports.
    public private(set) var ssrcLimitDrops: UInt64 = 0

    public init() {}

    public func add(_ transport: PeerTransport, id: TransportID) {
        transports[id] = transport
        router.register(id, localUfrag: transport.localCredentials.ufrag)
    }

    public func transport(_ id: TransportID) -> PeerTransport? { transports[id] }
    public var transportCount: Int { transports.count }
    public var routerCounters: PeerRouter<TransportID>.Counters { router.counters }

    public func remove(_ id: TransportID) {
        transports[id] = nil
        router.remove(id)
    }

    /// Copies `packet` into a transmit slot, protects it there for `id`'s
    /// peer and queues it: one copy, no allocation. False when the
    /// transport has no route (not connected, consent lost).
    @discardableResult
    public func sendRTP(_ packet: UnsafeRawBufferPointer, to id: TransportID, rtcp: Bool = false, transmit: TransmitQueue) -> Bool
    {
        guard let transport = transports[id], let destination = transport.selectedAddress else { return false }
        var sent = false
        transmit.send(to: destination, from: transport.selectedLocalAddress) { slot in
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

    // MARK: WorkerEngine

    public func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?,
        now: Instant, transmit: TransmitQueue
    ) {
        guard let id = router.route(UnsafeRawBufferPointer(datagram), from: source), let transport = transports[id] else {
            droppedDatagrams += 1
            return
        }
        let refusedBefore = transport.counters.ssrcLimitExceeded
        let result = transport.receive(datagram, from: source, to: local, now: now)
        ssrcLimitDrops &+= UInt64(transport.counters.ssrcLimitExceeded - refusedBefore)
        if transport.isValidated(source) { router.noteValidated(source, by: id) }
        switch result {
        case .handled: flush(id, transport, transmit: transmit)
        case .rtp, .rtcp: onMedia?(id, result, datagram, now, transmit)
        }
    }

    /// A transport still holds `address` as validated: an ICE-TCP
    /// connection from it stays open only while this is true.
    public func hasValidated(_ address: TransportAddress) -> Bool {
        guard let id = router.owner(of: address), let transport = transports[id] else { return false }
        return transport.isValidated(address)
    }

    public func control(_ message: Control, now: Instant, transmit: TransmitQueue) {
        message(self, now, transmit)
        for (id, transport) in transports { flush(id, transport, transmit: transmit) }
    }

    public func timeout(now: Instant, transmit: TransmitQueue) {
        for (id, transport) in transports {
            if let deadline = transport.nextDeadline, deadline <= now {
                transport.handleTimeout(now: now)
                flush(id, transport, transmit: transmit)
            }
        }
    }

    /// The earliest transport deadline. A linear scan: fine for the
    /// hundreds of transports a worker holds today; a timer heap replaces
    /// it when measurements say so.
    public func nextDeadline() -> Instant? {
        var earliest: Instant?
        for transport in transports.values {
            if let d = transport.nextDeadline, earliest.map({ d < $0 }) ?? true { earliest = d }
        }
        return earliest
    }

    /// Sends what every transport queued and reports their events.
    public func flushAll(transmit: TransmitQueue) {
        for (id, transport) in transports { flush(id, transport, transmit: transmit) }
    }

    /// Sends what `transport` queued and reports its events.
    public func flush(_ id: TransportID, _ transport: PeerTransport, transmit: TransmitQueue) {
        while let out = transport.pollTransmit() { transmit.send(out.bytes, to: out.to, from: out.from) }
        while let event = transport.pollEvent() {
            onEvent?(id, event)
            switch event {
            case .failed, .closed: remove(id)
            default: break
            }
        }
    }
}
