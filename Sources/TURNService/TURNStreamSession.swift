import NetIO
import TURN
import Wire

/// What reaches the TURN thread from the TCP/TLS listener's thread.
enum TURNStreamEvent: Sendable {
    case frame(TURNClient, [UInt8])
    case closed(TURNClient)
}

/// One TURN-over-TCP or TURN-over-TLS connection on `TCPServer`'s loop
/// thread (TLS is undone by the shell below it): splits the stream into
/// messages (`TURNStreamFramer`) and posts each to the TURN thread, which
/// owns the engine. A stream that is not TURN ends the connection.
final class TURNStreamSession: TCPConnectionHandler {
    let client: TURNClient
    private var framer = TURNStreamFramer()
    private let events: Mailbox<TURNStreamEvent>
    private let idleTimeout: Duration
    private var lastInput: Instant

    init(client: TURNClient, events: Mailbox<TURNStreamEvent>, idleTimeout: Duration, now: Instant) {
        self.client = client
        self.events = events
        self.idleTimeout = idleTimeout
        lastInput = now
    }

    func received(_ bytes: UnsafeRawBufferPointer, now: Instant) -> TCPConnectionAction {
        lastInput = now
        framer.append(bytes)
        do {
            while let frame = try framer.next() { events.post(.frame(client, frame)) }
        } catch {
            return .closeNow
        }
        return .none
    }

    /// A connection that sends nothing (not even a Refresh, which a client
    /// with an allocation sends well within its lifetime) for
    /// `idleTimeout` is closed, so idle sockets cannot pile up.
    func timeout(now: Instant) -> TCPConnectionAction { .closeNow }

    func nextDeadline() -> Instant? { lastInput + idleTimeout }

    func closed(_ reason: TCPCloseReason) { events.post(.closed(client)) }
}
