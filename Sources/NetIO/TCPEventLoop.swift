import CShim
import Synchronization
import TLS
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// The state a `TCPServer` shares between its loop thread and the threads
/// that post, drain and stop.
final class TCPServerShared<Handler: TCPConnectionHandler>: Sendable {
    let mailbox = Mailbox<TCPServerControl<Handler>>()
    let stopRequested = Atomic<Bool>(false)
    /// Set by the loop as it exits; messages posted under this lock before
    /// it is set are seen by the loop's final mailbox drain.
    let exited = Mutex<Bool>(false)
    /// pthread_self() of the loop thread, so `stop()` never joins itself.
    let loopThread = Atomic<UInt>(0)
    let accepting = Atomic<Bool>(true)
    let connections = Atomic<Int>(0)
    let accepted = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    let addressRefusals = Atomic<Int>(0)
    let trackedAddresses = Atomic<Int>(0)
    let unsentBytes = Atomic<Int>(0)
    let unsentLimitCloses = Atomic<Int>(0)
    let writeBlocked = Atomic<Int>(0)
    let tlsFailures = Atomic<Int>(0)

    /// Posts unless the loop has exited; the lock orders the post before
    /// the loop's final drain, so a message is either run or refused.
    func postUnlessExited(_ message: TCPServerControl<Handler>) -> Bool {
        let mailbox = self.mailbox
        return exited.withLock { exited in
            guard !exited else { return false }
            mailbox.post(message)
            return true
        }
    }

    /// Wakes the loop without a message (stop).
    func wake() {
        var one: UInt64 = 1
        _ = write(mailbox.eventDescriptor, &one, 8)
    }

    var onLoopThread: Bool { loopThread.load(ordering: .acquiring) == UInt(pthread_self()) }
}

/// A message to the loop thread.
enum TCPServerControl<Handler: TCPConnectionHandler>: Sendable {
    case work(TCPConnectionID, @Sendable (Handler, Instant) -> TCPConnectionAction)
    case drain(TCPLatch)
}

/// A one-shot signal from the loop to a waiting thread, on an eventfd.
final class TCPLatch: Sendable {
    private let descriptor = swiftlet_eventfd_create()

    deinit { if descriptor >= 0 { close(descriptor) } }

    func signal() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }

    func wait() {
        guard descriptor >= 0 else { return }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&entry, 1, -1) < 0 && errno == EINTR {}
    }
}

/// The loop of a `TCPServer`: one thread, one epoll set holding the
/// listener, the mailbox's eventfd and every connection (level-triggered).
/// Each round it waits until the earliest deadline, accepts, reads into one
/// shared buffer and hands the bytes to the handler, writes what the handler
/// answered, runs posted work, and fires due deadlines from
/// `TCPDeadlineHeap`. Everything here belongs to that thread.
final class TCPEventLoop<Handler: TCPConnectionHandler>: @unchecked Sendable {
    typealias Factory = @Sendable (TCPConnectionID, SocketAddress?, Instant) -> Handler

    private static var listenerTag: UInt64 { 1 }
    private static var mailboxTag: UInt64 { 2 }
    private static var secureListenerTag: UInt64 { 3 }
    /// Connection ids start above the fixed tags and double as epoll tags.
    private static var firstConnectionID: UInt64 { 16 }

    let shared: TCPServerShared<Handler>
    private let configuration: TCPServerConfiguration
    private let factory: Factory
    private let epoll: Int32
    private var listener: TCPListener?
    /// The TLS listener and the contexts its connections take.
    private var secureListener: TCPListener?
    private let contexts: TLSContextSlot?
    private var connections: [UInt64: TCPConnection<Handler>] = [:]
    private var deadlines = TCPDeadlineHeap()
    private var nextID = firstConnectionID
    private let receiveBuffer: UnsafeMutableRawBufferPointer
    /// The mailbox drained into storage kept between turns (no allocation
    /// per wake-up in steady state).
    private var mailboxMessages: [TCPServerControl<Handler>] = []
    /// Set after the listener was dropped from epoll for lack of
    /// descriptors or memory; accepting resumes at this instant.
    private var acceptPausedUntil: Instant?
    private var addresses: TCPAddressLimiter
    /// Output queued over all connections (`TCPConnection.budget`).
    private let budget = TCPUnsentBudget()
    private var reports: TCPRefusalReports

    init(
        listener: consuming TCPListener, secureListener: consuming TCPListener?, contexts: TLSContextSlot?,
        configuration: TCPServerConfiguration, shared: TCPServerShared<Handler>, factory: @escaping Factory
    ) throws(SocketError) {
        let epoll = swiftlet_epoll_create()
        guard epoll >= 0 else { throw SocketError(operation: "epoll_create", errno: errno) }
        let secureDescriptor = secureListener?.descriptor
        let secureTag = Self.secureListenerTag
        guard swiftlet_epoll_add_readable(epoll, listener.descriptor, Self.listenerTag) == 0,
            swiftlet_epoll_add_readable(epoll, shared.mailbox.eventDescriptor, Self.mailboxTag) == 0,
            secureDescriptor.map({ swiftlet_epoll_add_readable(epoll, $0, secureTag) == 0 }) ?? true
        else {
            let e = errno
            Glibc.close(epoll)
            throw SocketError(operation: "epoll_ctl", errno: e)
        }
        self.epoll = epoll
        self.listener = .some(listener)
        self.secureListener = secureListener
        self.contexts = contexts
        self.configuration = configuration
        self.shared = shared
        self.factory = factory
        reports = TCPRefusalReports(perSecond: configuration.maxRefusalReportsPerSecond)
        addresses = TCPAddressLimiter(
            limits: .init(
                maxConnectionsPerAddress: configuration.maxConnectionsPerAddress,
                connectionsPerSecond: configuration.newConnectionsPerSecondPerAddress,
                burst: configuration.newConnectionBurstPerAddress, maxAddresses: configuration.maxTrackedAddresses,
                exempt: configuration.trustedProxies))
        addresses.exemptPeers = configuration.exemptPeers
        receiveBuffer = .allocate(byteCount: max(configuration.receiveBufferSize, 1), alignment: 16)
    }

    deinit {
        receiveBuffer.deallocate()
        Glibc.close(epoll)
    }

    /// Runs until `shared.stopRequested`, then closes everything.
    func run() {
        shared.loopThread.store(UInt(pthread_self()), ordering: .releasing)
        var tags = [UInt64](repeating: 0, count: 64)
        var ready = [UInt32](repeating: 0, count: 64)
        while !shared.stopRequested.load(ordering: .acquiring) {
            let wait = waitMilliseconds(now: MonotonicClock.now())
            let n = tags.withUnsafeMutableBufferPointer { t in
                ready.withUnsafeMutableBufferPointer { r in
                    swiftlet_epoll_wait_ready(epoll, t.baseAddress, r.baseAddress, Int32(t.count), wait)
                }
            }
            let now = MonotonicClock.now()
            for i in 0..<max(Int(n), 0) {
                switch tags[i] {
                case Self.listenerTag: acceptPending(secure: false, now: now)
                case Self.secureListenerTag: acceptPending(secure: true, now: now)
                case Self.mailboxTag: runMailbox(now: now)
                default: serviceConnection(tags[i], ready: ready[i], now: now)
                }
            }
            fireDeadlines(now: now)
            resumeAcceptingIfDue(now: now)
        }
        finish()
    }

    /// epoll's timeout: until the earliest deadline, rounded up so the loop
    /// never wakes early and spins; at most one second.
    private func waitMilliseconds(now: Instant) -> Int32 {
        var earliest = deadlines.first?.deadline
        if let paused = acceptPausedUntil, earliest.map({ paused < $0 }) ?? true { earliest = paused }
        guard let earliest else { return 1000 }
        let ns = earliest.nanoseconds - now.nanoseconds
        if ns <= 0 { return 0 }
        return Int32(min((ns + 999_999) / 1_000_000, 1000))
    }

    // MARK: Accepting

    private func acceptPending(secure: Bool, now: Instant) {
        // Bounded so that a connection storm cannot starve established ones.
        for _ in 0..<64 {
            let accepted: TCPStream?
            do {
                if secure {
                    guard secureListener != nil else { return }
                    accepted = try secureListener?.accept()
                } else {
                    guard listener != nil else { return }
                    accepted = try listener?.accept()
                }
            } catch {
                pauseAccepting(now: now)
                return
            }
            guard let stream = accepted else { return }
            guard connections.count < configuration.maxConnections else {
                // Over the limit: the stream ends here, the client sees EOF
                // (or the refusal bytes).
                shared.refused.add(1, ordering: .relaxed)
                refuse(stream, .serverFull, secure: secure, now: now)
                continue
            }
            let verdict = addresses.admit(stream.peer, now: now)
            shared.trackedAddresses.store(addresses.trackedAddresses, ordering: .relaxed)
            guard verdict == .admit else {
                shared.addressRefusals.add(1, ordering: .relaxed)
                refuse(stream, verdict == .rateLimited ? .rateLimited : .tooManyConnectionsFromAddress, secure: secure, now: now)
                continue
            }
            var tls: TLSLayer?
            if secure, let contexts {
                // Fails only without memory: the client sees EOF.
                guard let engine = try? TLSStream(server: contexts.current) else {
                    addresses.release(stream.peer)
                    continue
                }
                tls = TLSLayer(stream: engine, handshakeDeadline: now + configuration.tlsHandshakeTimeout)
            }
            admit(stream, tls: tls, now: now)
        }
    }

    /// A refused connection: the refusal bytes where they can be read as
    /// plain text, then the stream closes (when `stream` goes).
    private func refuse(_ stream: borrowing TCPStream, _ why: TCPRefusal, secure: Bool, now: Instant) {
        if !secure {
            let bytes = configuration.refusalBytes(why)
            if !bytes.isEmpty {
                _ = bytes.withUnsafeBytes { stream.send($0) }
                stream.shutdownWrite()
            }
        }
        report(stream.peer, why, now: now)
    }

    private func report(_ peer: SocketAddress?, _ why: TCPRefusal, now: Instant) {
        if let suppressed = reports.admit(now: now) { configuration.onRefusal(peer, why, suppressed) }
    }

    private func admit(_ stream: consuming TCPStream, tls: TLSLayer?, now: Instant) {
        if configuration.noDelay { stream.setNoDelay() }
        let peer = stream.peer
        let id = nextID
        nextID += 1
        guard swiftlet_epoll_add_interest(epoll, stream.descriptor, id, 1, 0) == 0 else {
            addresses.release(peer)
            return
        }
        let handler = factory(TCPConnectionID(rawValue: id), peer, now)
        let connection = TCPConnection(id: id, stream: stream, handler: handler, tls: tls, budget: budget)
        connection.peer = peer
        connections[id] = connection
        shared.connections.store(connections.count, ordering: .relaxed)
        shared.accepted.add(1, ordering: .relaxed)
        refreshDeadline(connection)
    }

    /// Out of descriptors or memory the listener stays readable; rather
    /// than spin, stop watching the listeners for a moment. Waiting clients
    /// stay in the backlog.
    private func pauseAccepting(now: Instant) {
        guard acceptPausedUntil == nil else { return }
        if let descriptor = listener?.descriptor { _ = swiftlet_epoll_remove(epoll, descriptor) }
        if let descriptor = secureListener?.descriptor { _ = swiftlet_epoll_remove(epoll, descriptor) }
        acceptPausedUntil = now + .milliseconds(100)
    }

    private func resumeAcceptingIfDue(now: Instant) {
        guard let until = acceptPausedUntil, until <= now else { return }
        acceptPausedUntil = nil
        if let descriptor = listener?.descriptor {
            _ = swiftlet_epoll_add_readable(epoll, descriptor, Self.listenerTag)
        }
        if let descriptor = secureListener?.descriptor {
            _ = swiftlet_epoll_add_readable(epoll, descriptor, Self.secureListenerTag)
        }
    }

    /// Closes the listeners: new connections are refused by the kernel,
    /// existing ones carry on.
    private func stopAccepting() {
        if acceptPausedUntil == nil {
            if let descriptor = listener?.descriptor { _ = swiftlet_epoll_remove(epoll, descriptor) }
            if let descriptor = secureListener?.descriptor { _ = swiftlet_epoll_remove(epoll, descriptor) }
        }
        acceptPausedUntil = nil
        listener = nil
        secureListener = nil
        shared.accepting.store(false, ordering: .releasing)
    }

    // MARK: Posted work

    private func runMailbox(now: Instant) {
        shared.mailbox.drain(into: &mailboxMessages)
        defer { mailboxMessages.removeAll(keepingCapacity: true) }
        for message in mailboxMessages {
            switch message {
            case .work(let id, let work):
                guard let connection = connections[id.rawValue] else { continue }
                apply(work(connection.handler, now), to: connection, now: now)
            case .drain(let latch):
                stopAccepting()
                latch.signal()
            }
        }
    }

    // MARK: Connections

    private func serviceConnection(_ id: UInt64, ready: UInt32, now: Instant) {
        guard let connection = connections[id] else { return }
        let hangup = ready & SWIFTLET_READY_HANGUP != 0
        if ready & SWIFTLET_READY_READABLE != 0 || hangup, connection.wantsReadable {
            read(connection, now: now)
        }
        if connection.isOpen, ready & SWIFTLET_READY_WRITABLE != 0 || hangup, connection.unsent > 0 {
            flush(connection, now: now)
        }
        // Both directions are shut or the socket failed: nothing more can move.
        if connection.isOpen, hangup {
            let error = connection.stream.pendingError
            end(connection, error != 0 ? .failed(errno: error) : .peerClosed)
        }
    }

    private func read(_ connection: TCPConnection<Handler>, now: Instant) {
        // A few buffers per wakeup, then on to the other connections; the
        // level-triggered watch brings us back for the rest.
        for _ in 0..<4 {
            switch connection.stream.receive(into: receiveBuffer) {
            case .bytes(let n):
                if connection.phase == .open {
                    let bytes = UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<n])
                    if let tls = connection.tls {
                        receiveOverTLS(bytes, tls, connection, now: now)
                    } else {
                        apply(connection.handler.received(bytes, now: now), to: connection, now: now)
                    }
                    guard connection.isOpen, connection.wantsReadable else { return }
                }
                if n < receiveBuffer.count { return }
            case .wouldBlock:
                return
            case .endOfStream:
                peerClosed(connection, now: now)
                return
            case .failed(let e):
                end(connection, .failed(errno: e))
                return
            }
        }
    }

    /// Ciphertext in: the TLS stream answers the handshake itself (its
    /// flights go out here), and what it decrypts goes to the handler. A
    /// failure sends the alert and closes; the peer's close_notify is its
    /// FIN.
    private func receiveOverTLS(
        _ bytes: UnsafeRawBufferPointer, _ tls: TLSLayer, _ connection: TCPConnection<Handler>, now: Instant
    ) {
        let wasHandshaking = tls.handshaking
        let plaintext: [UInt8]
        do {
            plaintext = try tls.stream.receive(bytes)
        } catch {
            failTLS(connection, tls, reason: error.description)
            return
        }
        let flight = tls.stream.takeOutput()
        if !flight.isEmpty {
            apply(TCPConnectionAction(send: flight), to: connection, now: now, encrypted: true)
            guard connection.isOpen else { return }
        }
        if wasHandshaking, !tls.handshaking { refreshDeadline(connection) }
        if !plaintext.isEmpty {
            let action = plaintext.withUnsafeBytes { connection.handler.received($0, now: now) }
            apply(action, to: connection, now: now)
        }
        if connection.isOpen, tls.stream.receivedCloseNotify {
            // Our close_notify after the handler's last answer, then as FIN.
            if connection.acceptsOutput {
                tls.stream.shutdown()
                apply(TCPConnectionAction(send: tls.stream.takeOutput()), to: connection, now: now, encrypted: true)
            }
            if connection.isOpen { peerClosed(connection, now: now) }
        }
    }

    /// Sends what the TLS stream has for the peer (an alert) without
    /// waiting, then closes.
    private func failTLS(_ connection: TCPConnection<Handler>, _ tls: TLSLayer, reason: String) {
        shared.tlsFailures.add(1, ordering: .relaxed)
        connection.discardOutput()
        _ = connection.enqueue(tls.stream.takeOutput())
        end(connection, .tlsFailed(reason: reason))
    }

    /// The peer sent FIN. Half-close: what is queued (and what posted work
    /// adds meanwhile) is still flushed before the connection closes.
    private func peerClosed(_ connection: TCPConnection<Handler>, now: Instant) {
        switch connection.phase {
        case .lingering:
            end(connection, .requested)
        case .flushingThenLinger:
            connection.phase = .flushingThenClose(.requested)
            finishIfFlushed(connection, now: now)
        case .open, .flushingThenClose:
            connection.phase = .flushingThenClose(.peerClosed)
            finishIfFlushed(connection, now: now)
        }
    }

    /// Carries out a handler's answer. On a TLS connection the bytes are
    /// plaintext (unless `encrypted`: the stream's own flights) and a close
    /// after sending adds close_notify (RFC 8446 section 6.1).
    private func apply(
        _ action: TCPConnectionAction, to connection: TCPConnection<Handler>, now: Instant, encrypted: Bool = false
    ) {
        guard connection.isOpen else { return }
        if action.close == .now {
            connection.discardOutput()
            end(connection, .requested)
            return
        }
        var bytes = action.send
        if let tls = connection.tls, !encrypted, connection.acceptsOutput {
            do {
                // Before the handshake ends the stream holds it, bounded.
                try tls.stream.send(action.send)
            } catch {
                failTLS(connection, tls, reason: error.description)
                return
            }
            if action.close == .afterSend, connection.phase == .open { tls.stream.shutdown() }
            bytes = tls.stream.takeOutput()
        }
        if !bytes.isEmpty, connection.acceptsOutput {
            switch connection.enqueue(bytes) {
            case .failed(let e):
                end(connection, .failed(errno: e))
                return
            case .blocked:
                shared.writeBlocked.add(1, ordering: .relaxed)
                guard connection.unsent <= configuration.maxUnsentBytes else {
                    overLimit(connection, .unsentLimit, now: now)
                    return
                }
                guard budget.total <= configuration.maxUnsentBytesTotal else {
                    overLimit(connection, .serverUnsentLimit, now: now)
                    return
                }
            case .drained:
                break
            }
        }
        if action.close == .afterSend, connection.phase == .open {
            connection.phase = .flushingThenLinger
        }
        finishIfFlushed(connection, now: now)
    }

    private func flush(_ connection: TCPConnection<Handler>, now: Instant) {
        switch connection.flush() {
        case .failed(let e): end(connection, .failed(errno: e))
        case .blocked: updateInterest(connection)
        case .drained: finishIfFlushed(connection, now: now)
        }
    }

    /// Moves a connection on once its output is gone (FIN and linger, or
    /// close), then brings epoll's watch and the deadline up to date.
    private func finishIfFlushed(_ connection: TCPConnection<Handler>, now: Instant) {
        shared.unsentBytes.store(budget.total, ordering: .relaxed)
        guard connection.isOpen else { return }
        if connection.unsent == 0 {
            switch connection.phase {
            case .flushingThenLinger:
                connection.stream.shutdownWrite()
                connection.phase = .lingering(until: now + configuration.lingerTimeout)
            case .flushingThenClose(let reason):
                end(connection, reason)
                return
            case .open, .lingering:
                break
            }
        }
        updateInterest(connection)
        refreshDeadline(connection)
    }

    private func overLimit(_ connection: TCPConnection<Handler>, _ why: TCPRefusal, now: Instant) {
        shared.unsentLimitCloses.add(1, ordering: .relaxed)
        connection.discardOutput()
        report(connection.peer, why, now: now)
        end(connection, .unsentLimitExceeded)
    }

    private func updateInterest(_ connection: TCPConnection<Handler>) {
        guard connection.isOpen else { return }
        let readable = connection.wantsReadable
        let writable = connection.unsent > 0
        guard readable != connection.watchingReadable || writable != connection.watchingWritable else { return }
        connection.watchingReadable = readable
        connection.watchingWritable = writable
        let rc = swiftlet_epoll_modify_interest(
            epoll, connection.stream.descriptor, connection.id, readable ? 1 : 0, writable ? 1 : 0)
        if rc != 0 { end(connection, .failed(errno: errno)) }
    }

    private func end(_ connection: TCPConnection<Handler>, _ reason: TCPCloseReason) {
        guard connection.isOpen else { return }
        connection.isOpen = false
        _ = swiftlet_epoll_remove(epoll, connection.stream.descriptor)
        connections[connection.id] = nil
        // What the kernel never took is dropped with the connection.
        connection.discardOutput()
        addresses.release(connection.peer)
        shared.connections.store(connections.count, ordering: .relaxed)
        shared.unsentBytes.store(budget.total, ordering: .relaxed)
        connection.handler.closed(reason)
    }

    // MARK: Deadlines

    /// The deadline that matters now: the linger's end while lingering,
    /// otherwise the handler's.
    private func refreshDeadline(_ connection: TCPConnection<Handler>) {
        guard connection.isOpen else { return }
        let next: Instant?
        if case .lingering(let until) = connection.phase {
            next = until
        } else if let tls = connection.tls, tls.handshaking {
            next = min(tls.handshakeDeadline, connection.handler.nextDeadline() ?? tls.handshakeDeadline)
        } else {
            next = connection.handler.nextDeadline()
        }
        guard next != connection.deadline else { return }
        connection.deadline = next
        guard let next else { return }
        deadlines.push(.init(deadline: next, id: connection.id))
        if deadlines.count > 2 * connections.count + 64 {
            deadlines.rebuild(
                from: connections.values.lazy.compactMap { c in c.deadline.map { .init(deadline: $0, id: c.id) } })
        }
    }

    private func fireDeadlines(now: Instant) {
        // Collect first: a handler answering with a deadline already past
        // fires again next round, not in an endless loop here.
        var due: [TCPConnection<Handler>] = []
        while let top = deadlines.first, top.deadline <= now {
            _ = deadlines.pop()
            guard let connection = connections[top.id], connection.deadline == top.deadline else { continue }
            connection.deadline = nil
            due.append(connection)
        }
        for connection in due where connection.isOpen {
            if case .lingering = connection.phase {
                end(connection, .requested)
                continue
            }
            if let tls = connection.tls, tls.handshaking, tls.handshakeDeadline <= now {
                failTLS(connection, tls, reason: "the TLS handshake did not finish in time")
                continue
            }
            apply(connection.handler.timeout(now: now), to: connection, now: now)
            refreshDeadline(connection)
        }
    }

    // MARK: Stopping

    /// Closes the listener; runs what was posted before the stop (so a
    /// last message or close frame sent just before `stop()` still
    /// leaves) and answers drains that raced with it; then closes every
    /// connection after one last non-blocking flush each.
    private func finish() {
        stopAccepting()
        shared.exited.withLock { $0 = true }
        runMailbox(now: MonotonicClock.now())
        for id in connections.keys.sorted() {
            guard let connection = connections[id] else { continue }
            _ = connection.flush()
            end(connection, .serverStopped)
        }
    }
}
