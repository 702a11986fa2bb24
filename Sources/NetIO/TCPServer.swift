import Synchronization
import TLS
import Wire

#if canImport(Glibc)
    import Glibc
#endif

// # TCP for signalling
//
// The HTTP/WebSocket signalling server runs on `TCPServer`: one thread with
// an epoll loop that accepts connections and moves bytes. It parses nothing.
// Each connection gets a `TCPConnectionHandler` from the owner's factory;
// the handler is sans-IO (bytes and `now` in, a `TCPConnectionAction` out)
// and lives on the loop thread. Other threads reach a connection with
// `post(to:_:)` / `send(_:to:)` through a `Mailbox` woken by an eventfd.
//
// Per connection the shell keeps the bytes the kernel has not taken yet and
// watches EPOLLOUT only while there are some; past `maxUnsentBytes` the
// peer is not reading and the connection closes (slow-reader protection).
// A peer's FIN ends input; queued output is flushed, then `closed`. A
// handler's `.afterSend` flushes, sends FIN and lingers briefly so late
// client bytes do not turn into a reset that destroys the response.
//
// Time: each handler names its next deadline; the loop keeps them in a
// min-heap with lazy deletion (`TCPDeadlineHeap`) and sleeps in epoll until
// the earliest. Limits: `maxConnections` (beyond it a connection is
// accepted and closed at once); per client address, open connections and
// the rate of new ones (`TCPAddressLimiter`: a token bucket per address in
// a bounded table); queued output per connection (`maxUnsentBytes`) and
// for the whole server (`maxUnsentBytesTotal`). A refused connection gets
// `refusalBytes` (best effort: one non-blocking write, on the plain
// listener only) and is closed; `onRefusal` hears of it, at most
// `maxRefusalReportsPerSecond` times a second (a flood must not turn into
// a log flood).
//
// TLS: a second listener may serve the same handlers over TLS (HTTPS,
// WSS). The shell runs a `TLSStream` per connection between the socket and
// the handler, which sees only plaintext and never knows; each new
// connection takes the context current in its `TLSContextSlot` (reload).
// The handshake must end within `tlsHandshakeTimeout`; a failed handshake
// or a bad record closes that connection (`.tlsFailed`). Lifecycle: `drain()` closes the listener
// and keeps serving; `stop()` closes everything and joins the thread.

/// Settings of a `TCPServer`.
package struct TCPServerConfiguration: Sendable {
    /// listen(2) backlog (the kernel caps it at net.core.somaxconn).
    package var backlog: Int32 = 511
    /// Connections served at once; one more is accepted and closed at once.
    package var maxConnections = 10_000
    /// Bytes a connection may have waiting for the kernel after a write
    /// attempt; beyond this the peer is deemed not to read and the
    /// connection closes. A single response larger than this closes its
    /// connection too, unless the kernel takes the excess at once: raise it
    /// for large downloads.
    package var maxUnsentBytes = 4 << 20
    /// The one read buffer the loop shares among connections.
    package var receiveBufferSize = 64 << 10
    /// How long `.afterSend` waits for the peer's FIN after ours.
    package var lingerTimeout: Duration = .seconds(2)
    /// TCP_NODELAY on accepted connections.
    package var noDelay = true
    /// How long a connection on the TLS listener may take to finish its
    /// handshake.
    package var tlsHandshakeTimeout: Duration = .seconds(10)
    /// Connections one client address (IPv4, or an IPv6 /64) holds open.
    /// The shell's defaults for the per-address limits are off; the
    /// signalling server sets its own (`SignalingConnectionLimits`).
    package var maxConnectionsPerAddress = Int.max
    /// New connections per second one address may open, on average...
    package var newConnectionsPerSecondPerAddress = 1e9
    /// ...and at once after a quiet spell (the token bucket's size).
    package var newConnectionBurstPerAddress = 1e9
    /// Client addresses remembered for the two limits above; past it, those
    /// with no open connection are forgotten.
    package var maxTrackedAddresses = 16_384
    /// Reverse proxies: their connections carry many clients, so the
    /// per-address limits above do not apply to them (only
    /// `maxConnections`); the handler attributes each request to the
    /// client the proxy names (`X-Forwarded-For`) and limits that instead.
    package var trustedProxies: [AddressPrefix] = []
    /// Addresses exempt from the per-address limits at run time (a
    /// cluster's other nodes, `PeerAddressSet`); nil: none.
    package var exemptPeers: PeerAddressSet?
    /// Bytes queued for the kernel over all connections; the connection
    /// whose output passes it is closed, as for `maxUnsentBytes`.
    package var maxUnsentBytesTotal = 256 << 20
    /// Written (once, without waiting) to a connection refused at accept on
    /// the plain listener: an HTTP 429/503, say. Empty: just close.
    package var refusalBytes: @Sendable (TCPRefusal) -> [UInt8] = { _ in [] }
    /// Told of refused connections and of connections closed for their
    /// output, on the loop thread, with the peer's address. `suppressed`:
    /// reports dropped since the last one (over `maxRefusalReportsPerSecond`).
    package var onRefusal: @Sendable (_ peer: SocketAddress?, _ why: TCPRefusal, _ suppressed: Int) -> Void = { _, _, _ in }
    package var maxRefusalReportsPerSecond = 10

    package init() {}
}

/// Why the server refused or cut off a connection.
package enum TCPRefusal: Equatable, Sendable, CustomStringConvertible {
    /// `maxConnections` connections are open.
    case serverFull
    /// The peer's address holds `maxConnectionsPerAddress` connections.
    case tooManyConnectionsFromAddress
    /// The peer's address opens connections faster than its bucket allows.
    case rateLimited
    /// The connection's queued output passed `maxUnsentBytes`.
    case unsentLimit
    /// All connections' queued output passed `maxUnsentBytesTotal`.
    case serverUnsentLimit

    package var description: String {
        switch self {
        case .serverFull: "too many connections on this server"
        case .tooManyConnectionsFromAddress: "too many connections from this address"
        case .rateLimited: "new connections from this address come too fast"
        case .unsentLimit: "the peer does not read: its queued output passed the per-connection limit"
        case .serverUnsentLimit: "the server's queued output passed its limit"
        }
    }
}

/// Counters since the server started; approximate while it runs.
package struct TCPServerStatistics: Equatable, Sendable {
    /// Connections open now.
    package var connections: Int
    /// Connections admitted (handler created).
    package var accepted: Int
    /// Connections accepted and closed at once over `maxConnections`.
    package var refused: Int
    /// Connections refused at accept by the per-address limits (open
    /// connections or rate).
    package var addressRefusals: Int
    /// Client addresses in the limiter's table now.
    package var trackedAddresses: Int
    /// Bytes queued for the kernel over all connections now.
    package var unsentBytes: Int
    /// Connections closed for exceeding `maxUnsentBytes`.
    package var unsentLimitCloses: Int
    /// Times output had to wait for the kernel (EPOLLOUT path).
    package var writeBlocked: Int
    /// TLS connections closed for a failed or timed-out handshake or a bad
    /// record.
    package var tlsFailures: Int
}

/// A TCP server on its own thread; see the section at the top of this file.
/// All methods may be called from any thread.
package final class TCPServer<Handler: TCPConnectionHandler>: Sendable {
    package let localAddress: SocketAddress
    /// The TLS listener's address, if there is one.
    package let secureLocalAddress: SocketAddress?
    private let shared: TCPServerShared<Handler>
    private let thread: Mutex<WorkerThread?>

    /// Binds and listens on `address` (port 0 picks one; read it from
    /// `localAddress`), then starts the loop thread. `makeHandler` runs on
    /// the loop thread for each admitted connection with its id, the peer's
    /// address and the accept instant. With `secure`, a second listener on
    /// that address serves the same handlers over TLS with the slot's
    /// current context.
    package init(
        bindingTo address: SocketAddress, secure: (address: SocketAddress, contexts: TLSContextSlot)? = nil,
        configuration: TCPServerConfiguration = TCPServerConfiguration(),
        makeHandler: @escaping @Sendable (TCPConnectionID, SocketAddress?, Instant) -> Handler
    ) throws(SocketError) {
        let listener = try TCPListener(bindingTo: address, backlog: configuration.backlog)
        localAddress = listener.localAddress
        var secureListener: TCPListener? = nil
        if let secure {
            secureListener = try TCPListener(bindingTo: secure.address, backlog: configuration.backlog)
        }
        secureLocalAddress = secureListener?.localAddress
        let shared = TCPServerShared<Handler>()
        let loop = try TCPEventLoop(
            listener: listener, secureListener: secureListener, contexts: secure?.contexts, configuration: configuration,
            shared: shared, factory: makeHandler)
        self.shared = shared
        thread = Mutex(WorkerThread(name: "tcp-loop") { loop.run() })
    }

    /// Stops the server if the owner did not.
    deinit { stop() }

    /// Runs `work` on the loop thread with the connection's handler and
    /// carries out its answer (a server-initiated WebSocket message, a
    /// close). Dropped if the connection is gone by then. Returns false
    /// when the server has stopped.
    @discardableResult
    package func post(
        to connection: TCPConnectionID, _ work: @escaping @Sendable (Handler, Instant) -> TCPConnectionAction
    ) -> Bool {
        shared.postUnlessExited(.work(connection, work))
    }

    /// Sends bytes already framed by the caller, in order after everything
    /// posted before, bypassing the handler.
    @discardableResult
    package func send(
        _ bytes: [UInt8], to connection: TCPConnectionID, then close: TCPConnectionAction.Close = .none
    )
        -> Bool
    {
        let action = TCPConnectionAction(send: bytes, close: close)
        return post(to: connection) { _, _ in action }
    }

    /// Stops accepting: the listener closes, so new connections are refused
    /// by the kernel, while existing connections are served until `stop()`.
    /// (The signalling server's SIGTERM drain does not use it: it keeps
    /// accepting, to answer /readyz and refuse joins with 503.) Returns once
    /// the listener is closed; called on the
    /// loop thread (from a handler) it returns at once and takes effect
    /// after the current round.
    package func drain() {
        let latch = TCPLatch()
        if shared.postUnlessExited(.drain(latch)), !shared.onLoopThread { latch.wait() }
    }

    /// Closes the listener and every connection (their handlers get
    /// `closed(.serverStopped)`) and joins the loop thread. Idempotent.
    /// Called on the loop thread it only asks; the loop ends after the
    /// current round and the joining is left to the next caller or deinit.
    package func stop() {
        shared.stopRequested.store(true, ordering: .releasing)
        shared.wake()
        guard !shared.onLoopThread else { return }
        thread.withLock { thread in
            thread?.join()
            thread = nil
        }
    }

    /// False once the loop has exited.
    package var isRunning: Bool { !shared.exited.withLock { $0 } }

    /// False after `drain()` or `stop()`.
    package var isAccepting: Bool { shared.accepting.load(ordering: .acquiring) }

    package var statistics: TCPServerStatistics {
        TCPServerStatistics(
            connections: shared.connections.load(ordering: .relaxed),
            accepted: shared.accepted.load(ordering: .relaxed),
            refused: shared.refused.load(ordering: .relaxed),
            addressRefusals: shared.addressRefusals.load(ordering: .relaxed),
            trackedAddresses: shared.trackedAddresses.load(ordering: .relaxed),
            unsentBytes: shared.unsentBytes.load(ordering: .relaxed),
            unsentLimitCloses: shared.unsentLimitCloses.load(ordering: .relaxed),
            writeBlocked: shared.writeBlocked.load(ordering: .relaxed),
            tlsFailures: shared.tlsFailures.load(ordering: .relaxed))
    }
}
