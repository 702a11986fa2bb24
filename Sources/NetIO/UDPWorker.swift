import CShim
import Synchronization
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// What a worker drives: the sans-IO world of one worker thread (its
/// sessions, rooms and timers). The worker reads the clock and the socket and
/// hands bytes and `now` in; the engine answers through the transmit queue
/// and says when it next needs to be woken.
package protocol WorkerEngine: AnyObject {
    associatedtype Control: Sendable

    /// One received datagram, sent by `source` to our address `local` (on a
    /// wildcard-bound socket; nil on a bound one, whose address is fixed).
    /// The buffer is the worker's receive slot and may be decrypted or
    /// rewritten in place; it is reused after return.
    func receive(
        _ datagram: UnsafeMutableRawBufferPointer, from source: TransportAddress, to local: TransportAddress?, now: Instant,
        transmit: TransmitQueue)
    /// A control message posted to the worker's mailbox (signalling side).
    func control(_ message: Control, now: Instant, transmit: TransmitQueue)
    /// Called once `now` has reached `nextDeadline()`.
    func timeout(now: Instant, transmit: TransmitQueue)
    /// The earliest instant the engine needs `timeout`, or nil.
    func nextDeadline() -> Instant?
    /// Whether a transport has validated `address` (a STUN check with its
    /// credentials): an ICE-TCP connection lives only while this holds.
    func hasValidated(_ address: TransportAddress) -> Bool
}

extension WorkerEngine {
    /// An engine without ICE accepts no ICE-TCP connection for long.
    package func hasValidated(_ address: TransportAddress) -> Bool { false }
}

/// One media worker: a UDP socket, an epoll loop, a mailbox woken by an
/// eventfd, and the engine that owns this worker's sessions. Everything but
/// `mailbox` and `requestStop()` belongs to the thread running `run()`:
/// packets are read, handled and sent on that thread, without a lock.
package final class UDPWorker<Engine: WorkerEngine>: @unchecked Sendable {
    package let mailbox = Mailbox<Engine.Control>()
    /// The last drain's messages, kept so a drain allocates nothing.
    private var drained: [Engine.Control] = []
    package let localAddress: SocketAddress
    /// Bound to ::, receiving IPv4 too (see `UDPSocket`).
    package let isDualStack: Bool
    private let socket: UDPSocket
    private let engine: Engine
    private let receiveBatch: DatagramBatch
    private let transmit: TransmitQueue
    private let epoll: Int32
    private let stopRequested = Atomic<Bool>(false)
    /// The worker's ICE-TCP port (RFC 6544), if it has one.
    package let tcpPort: ICETCPPort?
    /// Datagrams received since start (read it from the worker thread or
    /// after `run()` returned).
    package private(set) var receivedDatagrams = 0
    /// Datagrams the UDP socket sent (same rule as `receivedDatagrams`).
    package var transmittedDatagrams: Int { transmit.sent }
    /// The socket's UDP GSO state and send counters (same rule).
    package var segmentation: UDPSegmentation { transmit.segmentation }
    /// The same, as last published: any thread (`/metrics`).
    package var sendCounters: UDPSendCounters { transmit.published }
    /// Receive-to-send delay of what this worker sent (any thread).
    package var delayHistogram: DurationHistogram { transmit.publishedDelay.snapshot }
    /// Work done once per loop turn besides the socket, the mailbox and the
    /// timers, before the flush (the media plane drains the rings from the
    /// other workers and wakes the workers it pushed to). Returns true when
    /// more is waiting: the next wait then does not sleep. Set before
    /// `run()` starts; called on the worker thread only.
    package var onTurn: ((Instant, TransmitQueue) -> Bool)?

    /// The socket's kernel buffers as the kernel set them (nil: its
    /// defaults, none asked for or refused).
    package let socketBuffers: UDPSocketBuffers?
    /// Datagrams the kernel dropped with the socket's receive buffer full
    /// (nil where it does not say). Any thread.
    package var receiveBufferDrops: UInt64? { socket.receiveBufferDrops() }

    private static var socketTag: UInt64 { 1 }
    private static var mailboxTag: UInt64 { 2 }
    private static var tcpTag: UInt64 { 3 }

    /// With `tcp`, also listens there for ICE-TCP (its own thread's work,
    /// as the UDP socket is: see `ICETCPPort`). `udpGSO` asks for UDP
    /// segmentation offload on sends (used where the kernel has it).
    /// `transmitCapacity` datagrams wait for the turn's flush (1 MiB at
    /// 2048-byte slots): a received batch fanned out to tens of
    /// subscribers then leaves in one call, and each subscriber's packets
    /// of the turn can be grouped into one GSO message.
    package init(
        bindingTo address: SocketAddress, engine: Engine, reusePort: Bool = false,
        batchSize: Int = 32, slotSize: Int = 2048, tcp: (address: SocketAddress, limits: ICETCPLimits)? = nil,
        udpGSO: Bool = true, transmitCapacity: Int = 512, buffers: UDPSocketBuffers? = .standard
    ) throws(SocketError) {
        let s = try UDPSocket(bindingTo: address, reusePort: reusePort)
        s.setNonBlocking()
        socketBuffers = buffers.flatMap { s.setBuffers($0) }
        localAddress = try s.localAddress()
        isDualStack = s.isDualStack
        transmit = TransmitQueue(
            descriptor: s.descriptor, capacity: max(batchSize, transmitCapacity), slotSize: slotSize,
            localAddresses: s.reportsLocalAddresses,
            mapIPv4: s.isDualStack, segmentation: udpGSO)
        socket = s
        self.engine = engine
        receiveBatch = DatagramBatch(capacity: batchSize, slotSize: slotSize)
        // A frame is at most a datagram slot: what the engine sends and
        // receives is the same either way.
        tcpPort = try tcp.map { t throws(SocketError) in
            var limits = t.limits
            limits.maxFrameLength = min(limits.maxFrameLength, slotSize)
            return try ICETCPPort(bindingTo: t.address, limits: limits)
        }
        transmit.streamPort = tcpPort
        epoll = swiftlet_epoll_create()
        guard epoll >= 0,
            swiftlet_epoll_add_readable(epoll, socket.descriptor, Self.socketTag) == 0,
            swiftlet_epoll_add_readable(epoll, mailbox.eventDescriptor, Self.mailboxTag) == 0,
            tcpPort.map({ swiftlet_epoll_add_readable(epoll, $0.descriptor, Self.tcpTag) == 0 }) ?? true
        else { throw SocketError(operation: "epoll", errno: errno) }
    }

    deinit { close(epoll) }

    /// Asks `run()` to return after its current round. Any thread.
    package func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = write(mailbox.eventDescriptor, &one, 8)
    }

    /// Runs the loop on the calling thread until `requestStop()`.
    package func run() {
        var tags = [UInt64](repeating: 0, count: 4)
        var more = false
        while !stopRequested.load(ordering: .acquiring) {
            var deadline = engine.nextDeadline()
            if let t = tcpPort?.nextDeadline, deadline.map({ t < $0 }) ?? true { deadline = t }
            let wait = more ? 0 : Self.waitMilliseconds(until: deadline, now: MonotonicClock.now())
            let n = tags.withUnsafeMutableBufferPointer { swiftlet_epoll_wait(epoll, $0.baseAddress, Int32($0.count), wait) }
            if n > 0 {
                for i in 0..<Int(n) {
                    switch tags[i] {
                    case Self.socketTag: drainSocket()
                    case Self.tcpTag: tcpPort?.service(engine: engine, now: MonotonicClock.now(), transmit: transmit)
                    default: drainMailbox()
                    }
                }
            }
            let now = MonotonicClock.now()
            if let deadline = engine.nextDeadline(), deadline <= now {
                engine.timeout(now: now, transmit: transmit)
            }
            if let tcpPort, let t = tcpPort.nextDeadline, t <= now { tcpPort.sweep(engine: engine, now: now) }
            more = onTurn?(now, transmit) ?? false
            transmit.flush()
        }
    }

    /// epoll's timeout: until the deadline, rounded up so we never wake
    /// early and spin; at most one second without a deadline.
    static func waitMilliseconds(until deadline: Instant?, now: Instant) -> Int32 {
        guard let deadline else { return 1000 }
        let ns = deadline.nanoseconds - now.nanoseconds
        if ns <= 0 { return 0 }
        return Int32(min((ns + 999_999) / 1_000_000, 1000))
    }

    private func drainSocket() {
        // Bounded so that a flood cannot starve timers and control.
        for _ in 0..<16 {
            let count: Int
            do { count = try socket.receive(into: receiveBatch) } catch { return }
            if count == 0 { return }
            receivedDatagrams += count
            let now = MonotonicClock.now()
            // What the engine sends while it handles this batch counts
            // toward the worker's delay (`TransmitQueue.delay`).
            transmit.ingress = now
            defer { transmit.ingress = nil }
            for i in 0..<count {
                let length = receiveBatch.length(i)
                // A datagram larger than a slot was truncated by the kernel: drop it.
                guard length <= receiveBatch.slotSize, let source = receiveBatch.address(i) else { continue }
                let buffer = UnsafeMutableRawBufferPointer(rebasing: receiveBatch.slot(i)[0..<length])
                // The local address with our port: one side of the ICE pair.
                var local = receiveBatch.localAddress(i)
                local?.port = localAddress.port
                engine.receive(buffer, from: source.transportAddress, to: local, now: now, transmit: transmit)
            }
            if count < receiveBatch.capacity { return }
        }
    }

    private func drainMailbox() {
        let now = MonotonicClock.now()
        mailbox.drain(into: &drained)
        for message in drained {
            engine.control(message, now: now, transmit: transmit)
        }
        // The messages go now (their payloads may be large); the capacity stays.
        drained.removeAll(keepingCapacity: true)
    }
}
