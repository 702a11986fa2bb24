import Wire

/// A connection's identity for its whole life: assigned at accept from a
/// counter that never repeats, so a stale id (a push for a connection that
/// closed) can never reach a newer connection that got the same descriptor.
package struct TCPConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    package let rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package static func < (a: TCPConnectionID, b: TCPConnectionID) -> Bool { a.rawValue < b.rawValue }
    package var description: String { "tcp#\(rawValue)" }
}

/// What the shell does after a handler call: send these bytes, then maybe
/// close. A value, so handlers are tested without sockets.
package struct TCPConnectionAction: Equatable, Sendable {
    package enum Close: Equatable, Sendable {
        /// Keep the connection.
        case none
        /// Send everything queued (these bytes included), send FIN, then
        /// close once the peer closes too or a short linger passes; later
        /// input is discarded. The linger keeps the kernel from answering
        /// late client bytes with a reset that would destroy the response
        /// still in flight (the "lingering close" of HTTP servers).
        case afterSend
        /// Close at once; queued and given bytes are discarded.
        case now
    }

    package var send: [UInt8]
    package var close: Close

    package init(send: [UInt8] = [], close: Close = .none) {
        self.send = send
        self.close = close
    }

    /// Nothing to send; keep going.
    package static var none: TCPConnectionAction { TCPConnectionAction() }
    package static func send(_ bytes: [UInt8]) -> TCPConnectionAction { TCPConnectionAction(send: bytes) }
    package static func sendThenClose(_ bytes: [UInt8]) -> TCPConnectionAction {
        TCPConnectionAction(send: bytes, close: .afterSend)
    }
    package static var closeNow: TCPConnectionAction { TCPConnectionAction(close: .now) }
}

/// Why a connection ended; given once to `TCPConnectionHandler.closed`.
package enum TCPCloseReason: Equatable, Sendable {
    /// The handler asked (`.afterSend` or `.now`).
    case requested
    /// The peer sent FIN; what was queued was flushed first where possible.
    case peerClosed
    /// More than `TCPServerConfiguration.maxUnsentBytes` waited for a peer
    /// that does not read.
    case unsentLimitExceeded
    /// A read or write failed (ECONNRESET, EPIPE, ETIMEDOUT...).
    case failed(errno: Int32)
    /// The server stopped.
    case serverStopped
    /// On a TLS listener: the handshake failed or timed out, or a record
    /// did not decrypt (garbage or plain HTTP on the TLS port). Costs only
    /// this connection.
    case tlsFailed(reason: String)
}

/// The sans-IO side of one TCP connection (an HTTP/WebSocket parser and its
/// session): bytes and time in, `TCPConnectionAction` out. It never touches
/// the socket; the server's loop thread owns it and calls it from that
/// thread only, so it needs no lock. Other threads reach it through
/// `TCPServer.post(to:_:)`.
package protocol TCPConnectionHandler: AnyObject, SendableMetatype {
    /// Bytes arrived, in order, in chunks of any size (one message may span
    /// calls, one call may hold several). The buffer is reused after return.
    func received(_ bytes: UnsafeRawBufferPointer, now: Instant) -> TCPConnectionAction
    /// `now` has reached `nextDeadline()` (idle or slow-client timeouts,
    /// keep-alive pings).
    func timeout(now: Instant) -> TCPConnectionAction
    /// When `timeout(now:)` is next due, or nil. The shell asks again after
    /// each call into the handler (creation, `received`, `timeout`, posted
    /// work), so a deadline may change only in answer to one of those.
    func nextDeadline() -> Instant?
    /// The connection is gone; the handler is dropped right after. Called
    /// exactly once per handler.
    func closed(_ reason: TCPCloseReason)
}
