import CShim
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// A worker's ICE-TCP media port (RFC 6544 passive candidates, RFC 4571
/// framing): a listening socket and the connections it accepted, all owned
/// by the worker thread that owns the transports, like its UDP socket. Each
/// frame goes to the worker's engine exactly as a datagram would, from the
/// peer's address marked TCP (`TransportAddress.overTCP`), so the same
/// demultiplexing (STUN to ICE-lite, the ufrag naming the transport; DTLS;
/// SRTP) serves both. What the engine sends to a TCP address comes back
/// here through the worker's `TransmitQueue` and leaves framed on that
/// connection: egress follows the selected pair's protocol.
///
/// The port has its own epoll set, itself watched by the worker's epoll:
/// the worker learns "something on TCP" from one descriptor, and this set
/// says which socket and whether it is readable or writable.
///
/// Nothing here allocates per packet: reads land in one receive buffer,
/// frames are handed out in place or gathered in the connection's decoder,
/// and each connection's output buffer is allocated at accept.
package final class ICETCPPort {
    package let localAddress: SocketAddress
    package let limits: ICETCPLimits
    package private(set) var counters = ICETCPCounters()
    /// The descriptor the worker watches (this port's epoll set).
    package let descriptor: Int32

    private let listener: TCPListener
    private var connections: [ICETCPConnection?]
    private var freeSlots: [Int]
    private var bySource: [TransportAddress: Int] = [:]
    /// Slots with output the kernel has not taken (may hold stale entries).
    private var dirty: [Int] = []
    private var limiter: TCPAddressLimiter
    private let receiveBuffer: UnsafeMutableRawBufferPointer
    private var tags: [UInt64]
    private var ready: [UInt32]
    /// Deadlines are checked at most once a second, over every connection.
    private var nextSweep: Instant?

    private static var listenerTag: UInt64 { UInt64.max }

    /// `::` takes both families on one socket, as the UDP socket does.
    package init(bindingTo address: SocketAddress, limits: ICETCPLimits = .init()) throws(SocketError) {
        let listener = try TCPListener(bindingTo: address, dualStack: address.family == .v6 && address.isWildcard)
        let epoll = swiftlet_epoll_create()
        guard epoll >= 0 else { throw SocketError(operation: "epoll", errno: errno) }
        guard swiftlet_epoll_add_interest(epoll, listener.descriptor, Self.listenerTag, 1, 0) == 0 else {
            let e = errno
            close(epoll)
            throw SocketError(operation: "epoll", errno: e)
        }
        localAddress = listener.localAddress
        self.listener = listener
        self.limits = limits
        descriptor = epoll
        connections = Array(repeating: nil, count: max(1, limits.maxConnections))
        freeSlots = Array((0..<max(1, limits.maxConnections)).reversed())
        dirty.reserveCapacity(connections.count)
        limiter = TCPAddressLimiter(
            limits: .init(
                maxConnectionsPerAddress: limits.maxConnectionsPerAddress, connectionsPerSecond: 20, burst: 40,
                maxAddresses: 4 * connections.count))
        receiveBuffer = .allocate(byteCount: 16384, alignment: 16)
        tags = Array(repeating: 0, count: 32)
        ready = Array(repeating: 0, count: 32)
    }

    deinit {
        close(descriptor)
        receiveBuffer.deallocate()
    }

    package var connectionCount: Int { connections.count - freeSlots.count }

    /// The worker saw this port's epoll set readable: accepts, reads and
    /// writes what is ready, handing every frame to `engine`.
    package func service<Engine: WorkerEngine>(engine: Engine, now: Instant, transmit: TransmitQueue) {
        let n = tags.withUnsafeMutableBufferPointer { t in
            ready.withUnsafeMutableBufferPointer { r in
                swiftlet_epoll_wait_ready(descriptor, t.baseAddress, r.baseAddress, Int32(t.count), 0)
            }
        }
        guard n > 0 else { return }
        for i in 0..<Int(n) {
            let tag = tags[i]
            if tag == Self.listenerTag {
                acceptWaiting(now: now)
                continue
            }
            let slot = Int(tag)
            guard slot < connections.count, let connection = connections[slot] else { continue }
            let bits = ready[i]
            if bits & UInt32(SWIFTLET_READY_WRITABLE) != 0 {
                guard connection.flush() else { remove(slot); continue }
                if connection.pendingBytes == 0 { watchWritable(connection, false) }
            }
            if bits & UInt32(SWIFTLET_READY_READABLE | SWIFTLET_READY_HANGUP) != 0 {
                read(connection, engine: engine, now: now, transmit: transmit)
            }
        }
    }

    /// When `sweep` must run next; nil without connections.
    package var nextDeadline: Instant? { connectionCount == 0 ? nil : nextSweep }

    /// Closes connections past their deadline (no accepted binding in
    /// time, or idle), and bound ones whose transport is gone.
    package func sweep<Engine: WorkerEngine>(engine: Engine, now: Instant) {
        nextSweep = now + .seconds(1)
        for slot in connections.indices {
            guard let connection = connections[slot] else { continue }
            if connection.deadline <= now {
                if connection.bound { counters.idleTimeouts += 1 } else { counters.bindingTimeouts += 1 }
                remove(slot, counted: false)
            } else if connection.bound, !engine.hasValidated(connection.remote) {
                remove(slot)
            }
        }
    }

    // MARK: Egress (through TransmitQueue)

    /// Frames one packet for the connection from `address`; `write` fills
    /// at most `maxLength` bytes and returns the length (0 or less: nothing).
    func send(to address: TransportAddress, maxLength: Int, _ write: (UnsafeMutableRawBufferPointer) -> Int) {
        guard let slot = bySource[address], let connection = connections[slot] else {
            counters.noConnectionDrops += 1
            return
        }
        let frameLimit = min(maxLength, limits.maxFrameLength)
        var appended = connection.appendFrame(maxLength: frameLimit, write)
        if appended == false, !connection.watchingWritable, connection.pendingBytes > 0 {
            // A burst within one round (a worker round can forward hundreds
            // of packets): hand the kernel what it takes now rather than
            // drop what its socket buffer still has room for.
            guard connection.flush() else {
                remove(slot)
                return
            }
            appended = connection.appendFrame(maxLength: frameLimit, write)
        }
        switch appended {
        case true?:
            counters.framesSent += 1
            if !connection.queued, !connection.watchingWritable {
                connection.queued = true
                dirty.append(slot)
            }
        case false?: counters.sendBufferDrops += 1
        case nil: break
        }
    }

    /// Writes what each connection queued this round; a connection the
    /// kernel does not take it all from waits for EPOLLOUT.
    func flushPending() {
        guard !dirty.isEmpty else { return }
        for slot in dirty {
            guard let connection = connections[slot] else { continue }
            connection.queued = false
            guard connection.flush() else {
                remove(slot)
                continue
            }
            if connection.pendingBytes > 0 { watchWritable(connection, true) }
        }
        dirty.removeAll(keepingCapacity: true)
    }

    // MARK: Private

    private func acceptWaiting(now: Instant) {
        // Bounded so that a connection flood cannot starve the media.
        for _ in 0..<16 {
            let accepted: TCPStream?
            do { accepted = try listener.accept() } catch { return }
            guard let stream = accepted else { return }
            guard let peer = stream.peer, let slot = freeSlots.last,
                limiter.admit(peer, now: now) == .admit
            else {
                counters.refused += 1
                continue
            }
            stream.setNoDelay()
            freeSlots.removeLast()
            let remote = peer.transportAddress.overTCP
            let connection = ICETCPConnection(stream: stream, remote: remote, slot: slot, limits: limits, now: now)
            guard swiftlet_epoll_add_interest(descriptor, connection.descriptor, UInt64(slot), 1, 0) == 0 else {
                limiter.release(peer)
                freeSlots.append(slot)
                counters.refused += 1
                continue
            }
            connections[slot] = connection
            // A peer's address and port name one connection; a second one
            // from the same (a reconnect) takes the route.
            bySource[remote] = slot
            counters.accepted += 1
            if nextSweep == nil || connectionCount == 1 { nextSweep = now + .seconds(1) }
        }
    }

    private func read<Engine: WorkerEngine>(
        _ connection: ICETCPConnection, engine: Engine, now: Instant, transmit: TransmitQueue
    ) {
        // A few reads per readiness: epoll is level-triggered, so what is
        // left comes back next round, after the other sockets had theirs.
        for _ in 0..<4 {
            switch connection.stream.receive(into: receiveBuffer) {
            case .bytes(let n):
                var input = UnsafeMutableRawBufferPointer(rebasing: receiveBuffer[0..<n])
                while true {
                    let frame: UnsafeMutableRawBufferPointer?
                    do { frame = try connection.decoder.nextFrame(from: &input) } catch {
                        counters.framingErrors += 1
                        continue
                    }
                    guard let frame else { break }
                    counters.framesReceived += 1
                    engine.receive(frame, from: connection.remote, to: nil, now: now, transmit: transmit)
                    guard connections[connection.slot] === connection else { return }
                    if connection.bound || engine.hasValidated(connection.remote) {
                        connection.bound = true
                        connection.deadline = now + limits.idleTimeout
                    }
                }
                if n < receiveBuffer.count { return }
            case .wouldBlock:
                return
            case .endOfStream, .failed:
                remove(connection.slot)
                return
            }
        }
    }

    private func watchWritable(_ connection: ICETCPConnection, _ on: Bool) {
        guard connection.watchingWritable != on else { return }
        connection.watchingWritable = on
        _ = swiftlet_epoll_modify_interest(descriptor, connection.descriptor, UInt64(connection.slot), 1, on ? 1 : 0)
    }

    private func remove(_ slot: Int, counted: Bool = true) {
        guard let connection = connections[slot] else { return }
        if counted { counters.closed += 1 }
        _ = swiftlet_epoll_remove(descriptor, connection.descriptor)
        limiter.release(connection.peer)
        if bySource[connection.remote] == slot { bySource[connection.remote] = nil }
        connections[slot] = nil
        freeSlots.append(slot)
    }
}
