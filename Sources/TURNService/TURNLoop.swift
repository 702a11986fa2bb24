import CShim
import CryptoPrimitives
import NetIO
import Synchronization
import TURN
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// The TURN thread: an epoll loop over the UDP listener, the mailbox of
/// stream messages and the relay sockets, driving the `TURNServer` engine
/// and carrying out its output. Everything but `requestStop()` and
/// `allocations` belongs to the thread running `run()`.
final class TURNLoop: @unchecked Sendable {
    let udpAddress: SocketAddress
    let allocations = Atomic<Int>(0)
    let relaysOpened = Atomic<Int>(0)
    private var engine: TURNServer
    private let listener: UDPSocket
    private let events: Mailbox<TURNStreamEvent>
    private let tcp: TCPServer<TURNStreamSession>
    private let epoll: Int32
    private let batch = DatagramBatch(capacity: 16, slotSize: 2048)
    private let relayBind: SocketAddress
    private let relayAnnouncedIP: SocketAddress
    private var relays: [UInt64: RelaySocket] = [:]
    /// The mailbox's events, drained into storage kept between turns
    /// (`Mailbox.drain(into:)`: no allocation per turn in steady state).
    private var drained: [TURNStreamEvent] = []
    private let peerRoutes: [TransportAddress: TransportAddress]
    private var relayTags: [TransportAddress: UInt64] = [:]
    private var nextTag: UInt64 = 16
    private let stopRequested = Atomic<Bool>(false)

    private static var listenerTag: UInt64 { 1 }
    private static var mailboxTag: UInt64 { 2 }

    /// One allocation's relay socket and the address clients are told.
    final class RelaySocket {
        let socket: UDPSocket
        let relay: TransportAddress
        /// A routed peer's local address to the address the client named
        /// (`peerRoutes`), so that answers reach the engine as from the
        /// peer the client has a permission for.
        var aliases: [TransportAddress: TransportAddress] = [:]
        init(socket: consuming UDPSocket, relay: TransportAddress) {
            self.socket = socket
            self.relay = relay
        }
    }

    init(
        _ configuration: TURNServiceConfiguration, events: Mailbox<TURNStreamEvent>, tcp: TCPServer<TURNStreamSession>
    )
        throws(SocketError)
    {
        guard let bind = SocketAddress(ip: configuration.relayBindIP, port: 0),
            let announced = SocketAddress(ip: configuration.relayAnnouncedIP, port: 0)
        else { throw SocketError(operation: "TURN relay address", errno: EINVAL) }
        relayBind = bind
        relayAnnouncedIP = announced
        let socket = try UDPSocket(bindingTo: configuration.listen)
        socket.setNonBlocking()
        udpAddress = try socket.localAddress()
        listener = socket
        self.events = events
        self.tcp = tcp
        peerRoutes = configuration.peerRoutes
        engine = TURNServer(
            configuration: configuration.engine, credentials: configuration.credentials,
            policy: TURNPeerPolicy(allowed: configuration.allowedPeers), nonceKey: SecureRandom.bytes(32))
        epoll = swiftlet_epoll_create()
        guard epoll >= 0, swiftlet_epoll_add_readable(epoll, listener.descriptor, Self.listenerTag) == 0,
            swiftlet_epoll_add_readable(epoll, events.eventDescriptor, Self.mailboxTag) == 0
        else { throw SocketError(operation: "epoll", errno: errno) }
    }

    deinit { close(epoll) }

    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        events.wake()
    }

    func run() {
        var tags = [UInt64](repeating: 0, count: 32)
        while !stopRequested.load(ordering: .acquiring) {
            let wait = Self.waitMilliseconds(until: engine.nextDeadline(), now: MonotonicClock.now())
            let n = tags.withUnsafeMutableBufferPointer { swiftlet_epoll_wait(epoll, $0.baseAddress, Int32($0.count), wait) }
            for i in 0..<max(0, Int(n)) {
                switch tags[i] {
                case Self.listenerTag: drainListener()
                case Self.mailboxTag: drainMailbox()
                default: drainRelay(tags[i])
                }
            }
            let now = MonotonicClock.now()
            if let deadline = engine.nextDeadline(), deadline <= now { engine.handleTimeout(now: now) }
            perform()
        }
        for tag in Array(relays.keys) { closeRelay(tag) }
    }

    private func unixSeconds() -> Int64 { Int64(time(nil)) }

    /// epoll's timeout until `deadline`, rounded up (no early wake-ups that
    /// spin); at most a second.
    private static func waitMilliseconds(until deadline: Instant?, now: Instant) -> Int32 {
        guard let deadline else { return 1000 }
        let ns = deadline.nanoseconds - now.nanoseconds
        return ns <= 0 ? 0 : Int32(min((ns + 999_999) / 1_000_000, 1000))
    }

    private func drainListener() {
        for _ in 0..<16 {
            let count: Int
            do { count = try listener.receive(into: batch) } catch { return }
            if count == 0 { return }
            let now = MonotonicClock.now()
            let seconds = unixSeconds()
            for i in 0..<count {
                guard batch.length(i) <= batch.slotSize, let source = batch.address(i) else { continue }
                let client = TURNClient(transport: .udp, address: source.transportAddress)
                engine.handleClient(batch.datagram(i), from: client, now: now, unixSeconds: seconds) {
                    self.openRelay($0, even: $1)
                }
                perform()
            }
            if count < batch.capacity { return }
        }
    }

    private func drainMailbox() {
        let now = MonotonicClock.now()
        let seconds = unixSeconds()
        events.drain(into: &drained)
        for event in drained {
            switch event {
            case .frame(let client, let bytes):
                engine.handleClient(bytes, from: client, now: now, unixSeconds: seconds) { self.openRelay($0, even: $1) }
            case .closed(let client):
                engine.clientClosed(client)
            }
            perform()
        }
        // The frames' byte arrays go now, not at the next turn.
        drained.removeAll(keepingCapacity: true)
    }

    private func drainRelay(_ tag: UInt64) {
        guard let relay = relays[tag] else { return }
        for _ in 0..<16 {
            let count: Int
            do { count = try relay.socket.receive(into: batch) } catch { return }
            if count == 0 { return }
            let now = MonotonicClock.now()
            for i in 0..<count {
                guard batch.length(i) <= batch.slotSize, let source = batch.address(i) else { continue }
                let peer = relay.aliases[source.transportAddress] ?? source.transportAddress
                engine.handlePeer(batch.datagram(i), relay: relay.relay, from: peer, now: now)
            }
            perform()
            if count < batch.capacity { return }
        }
    }

    /// Binds a relay socket for a new allocation, on an even port when
    /// `even` (EVEN-PORT: the kernel's pick, tried up to 16 times, as half
    /// of its ephemeral ports are even); nil when the kernel refuses (no
    /// free port, descriptor limit): the client gets 508.
    private func openRelay(_ client: TURNClient, even: Bool) -> TransportAddress? {
        var attempt = 0
        var found: UDPSocket?
        while found == nil, attempt < 16 {
            attempt += 1
            guard let socket = try? UDPSocket(bindingTo: relayBind), let bound = try? socket.localAddress() else { return nil }
            if !even || bound.port % 2 == 0 { found = consume socket }
        }
        guard let socket = found.take(), let bound = try? socket.localAddress() else { return nil }
        socket.setNonBlocking()
        guard let announced = SocketAddress(ip: relayAnnouncedIP.ip, port: bound.port) else { return nil }
        let tag = nextTag
        nextTag += 1
        guard swiftlet_epoll_add_readable(epoll, socket.descriptor, tag) == 0 else { return nil }
        let relay = RelaySocket(socket: socket, relay: announced.transportAddress)
        relays[tag] = relay
        relayTags[relay.relay] = tag
        allocations.store(relays.count, ordering: .relaxed)
        relaysOpened.add(1, ordering: .relaxed)
        return relay.relay
    }

    private func closeRelay(_ tag: UInt64) {
        guard let relay = relays.removeValue(forKey: tag) else { return }
        relayTags[relay.relay] = nil
        _ = swiftlet_epoll_remove(epoll, relay.socket.descriptor)
        allocations.store(relays.count, ordering: .relaxed)
    }

    /// Carries out the engine's output.
    private func perform() {
        while let output = engine.pollOutput() {
            switch output {
            case .toClient(let client, let bytes):
                if client.transport.isStream {
                    tcp.send(bytes, to: TCPConnectionID(rawValue: client.connection))
                } else {
                    Self.send(bytes, to: client.address, on: listener.descriptor, dualStack: listener.isDualStack)
                }
            case .toPeer(let relayAddress, let peer, let bytes):
                guard let tag = relayTags[relayAddress], let relay = relays[tag] else { continue }
                var target = peer
                if let routed = peerRoutes[peer] {
                    target = routed
                    if relay.aliases[routed] != peer { relay.aliases[routed] = peer }
                }
                Self.send(bytes, to: target, on: relay.socket.descriptor, dualStack: relay.socket.isDualStack)
            case .releaseRelay(let relayAddress):
                if let tag = relayTags[relayAddress] { closeRelay(tag) }
            }
        }
    }

    /// One datagram, without waiting: a full socket buffer drops it, as
    /// UDP may.
    private static func send(_ bytes: [UInt8], to address: TransportAddress, on descriptor: Int32, dualStack: Bool) {
        let target = SocketAddress(address, mappedToIPv6: dualStack)
        let length = target.length
        bytes.withUnsafeBytes { b in
            _ = withUnsafeBytes(of: target.storage) { s in
                sendto(
                    descriptor, b.baseAddress, b.count, Int32(MSG_DONTWAIT),
                    s.baseAddress!.assumingMemoryBound(to: sockaddr.self),
                    length)
            }
        }
    }
}
