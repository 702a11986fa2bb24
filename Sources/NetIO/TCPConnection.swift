import TLS
import Wire

/// The shell's side of one accepted connection: the socket, the handler,
/// the bytes the kernel has not taken yet, and where the connection is in
/// its close sequence. Owned by the server's loop thread.
final class TCPConnection<Handler: TCPConnectionHandler> {
    enum Phase: Equatable {
        /// Input goes to the handler.
        case open
        /// The handler asked to close after sending: input is discarded,
        /// output flushes, then FIN and linger.
        case flushingThenLinger
        /// The peer sent FIN (or the handler is otherwise done reading):
        /// output flushes, then the connection closes with this reason.
        case flushingThenClose(TCPCloseReason)
        /// FIN sent; input is discarded until the peer's FIN or the instant.
        case lingering(until: Instant)
    }

    enum Flush: Equatable {
        /// Nothing left to send.
        case drained
        /// The kernel buffer is full; wait for EPOLLOUT.
        case blocked
        case failed(errno: Int32)
    }

    let id: UInt64
    let stream: TCPStream
    let handler: Handler
    var phase = Phase.open
    /// False once removed from the server; the descriptor closes when the
    /// last reference goes, so its number is never reused while in use.
    var isOpen = true
    /// Bytes not yet taken by the kernel: `outgoing[outgoingStart...]`.
    private var outgoing: [UInt8] = []
    private var outgoingStart = 0
    /// What epoll watches for now.
    var watchingReadable = true
    var watchingWritable = false
    /// The deadline the timer heap holds for this connection, if any.
    var deadline: Instant?
    /// On a TLS listener: the record layer between the socket and the
    /// handler, which sees only plaintext.
    let tls: TLSLayer?
    /// The peer's address, as the per-address limits counted it.
    var peer: SocketAddress?
    /// The server-wide count of queued bytes this connection's queue adds to.
    private let budget: TCPUnsentBudget

    init(id: UInt64, stream: consuming TCPStream, handler: Handler, tls: TLSLayer? = nil, budget: TCPUnsentBudget) {
        self.id = id
        self.stream = stream
        self.handler = handler
        self.tls = tls
        self.budget = budget
    }

    var unsent: Int { outgoing.count - outgoingStart }

    /// Whether the loop must still read the socket: to feed the handler, or
    /// to notice the peer's FIN while discarding.
    var wantsReadable: Bool {
        if case .flushingThenClose = phase { return false }
        return true
    }

    /// Whether new output from the handler is still sent.
    var acceptsOutput: Bool {
        switch phase {
        case .open, .flushingThenClose: return true
        case .flushingThenLinger, .lingering: return false
        }
    }

    /// Writes what the kernel takes of `bytes` (after anything queued) and
    /// queues the rest. Writing straight from the caller's array when
    /// nothing is queued saves a copy for the common small message.
    func enqueue(_ bytes: [UInt8]) -> Flush {
        guard !bytes.isEmpty else { return unsent == 0 ? .drained : .blocked }
        if unsent == 0 {
            var written = 0
            let result = bytes.withUnsafeBytes { raw -> Flush in
                while written < raw.count {
                    switch stream.send(UnsafeRawBufferPointer(rebasing: raw[written...])) {
                    case .bytes(let n): written += n
                    case .wouldBlock: return .blocked
                    case .failed(let e): return .failed(errno: e)
                    case .endOfStream: return .failed(errno: 0)
                    }
                }
                return .drained
            }
            if result == .blocked { append(bytes[written...]) }
            return result
        }
        append(bytes[...])
        return .blocked
    }

    /// Writes queued bytes until the kernel refuses more.
    func flush() -> Flush {
        while unsent > 0 {
            let result = outgoing.withUnsafeBytes { raw in
                stream.send(UnsafeRawBufferPointer(rebasing: raw[outgoingStart...]))
            }
            switch result {
            case .bytes(let n):
                outgoingStart += n
                budget.total -= n
            case .wouldBlock: return .blocked
            case .failed(let e): return .failed(errno: e)
            case .endOfStream: return .failed(errno: 0)
            }
        }
        // Empty: give back a large buffer (a big response is rare), keep a small one.
        if outgoing.capacity > 256 << 10 { outgoing = [] } else { outgoing.removeAll(keepingCapacity: true) }
        outgoingStart = 0
        return .drained
    }

    /// Drops queued output (an abortive close).
    func discardOutput() {
        budget.total -= unsent
        outgoing = []
        outgoingStart = 0
    }

    private func append(_ bytes: ArraySlice<UInt8>) {
        // Compact once the sent prefix dominates, so a steady trickle to a
        // slow reader does not grow the array without bound.
        if outgoingStart > 64 << 10, outgoingStart > outgoing.count / 2 {
            outgoing.removeSubrange(0..<outgoingStart)
            outgoingStart = 0
        }
        outgoing.append(contentsOf: bytes)
        budget.total += bytes.count
    }
}

/// Bytes queued for the kernel over all connections of one loop (only
/// that loop's thread touches it).
final class TCPUnsentBudget {
    var total = 0
}

/// A connection's TLS state: the stream engine and the instant by which
/// its handshake must end (a client that opens and never speaks, or
/// speaks slowly, holds a connection no longer than a slow HTTP request).
final class TLSLayer {
    var stream: TLSStream
    let handshakeDeadline: Instant

    init(stream: consuming TLSStream, handshakeDeadline: Instant) {
        self.stream = stream
        self.handshakeDeadline = handshakeDeadline
    }

    var handshaking: Bool { stream.phase == .handshaking }
}
