import CSCTPShim
import Synchronization
import Wire

/// The process's one usrsctp stack (usrsctp keeps global state: one stack
/// per process), run in "conn" mode with no threads and no sockets of its
/// own (`usrsctp_init_nothreads`, AF_CONN). Every call into usrsctp goes
/// through `withLock`, so usrsctp's callbacks, which it makes synchronously
/// from inside `usrsctp_conninput`, `usrsctp_sendv` and
/// `usrsctp_handle_timers`, run under the same lock and may touch any
/// association's queues: a timer advanced by one worker may retransmit for
/// an association another worker owns.
///
/// The lock is taken only for SCTP work (data channel packets, sends, the
/// timer tick), never on the RTP/RTCP path; data channel traffic is rare
/// next to media, so contention between workers is rare too.
final class SCTPStack: Sendable {
    static let shared = SCTPStack()

    /// usrsctp's timers run on elapsed milliseconds we give it: the latest
    /// `now` it was advanced to. Owners must pass instants of one
    /// monotonic clock; an earlier instant (a new virtual clock in a test)
    /// starts the count again without advancing.
    private let clock = Mutex<Instant?>(nil)
    /// Serialises every call into usrsctp (see the type's comment).
    private let stackLock = Mutex<Void>(())

    private init() {
        let output: swiftlet_sctp_output_fn = { context, packet, length in
            guard let context, let packet else { return }
            SCTPAssociationQueues.from(context).output(UnsafeRawBufferPointer(start: packet, count: length))
        }
        let message: swiftlet_sctp_message_fn = { context, stream, ppid, unordered, endOfRecord, data, length in
            guard let context else { return }
            SCTPAssociationQueues.from(context).deliver(
                stream: stream, ppid: ppid, unordered: unordered != 0, endOfRecord: endOfRecord != 0,
                data: UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : length))
        }
        let event: swiftlet_sctp_event_fn = { context, kind, stream in
            guard let context else { return }
            SCTPAssociationQueues.from(context).notify(kind: kind, stream: stream)
        }
        _ = swiftlet_sctp_initialize(output, message, event)
    }

    /// Runs `body` holding the stack's lock; every usrsctp call is made
    /// inside one.
    func withLock(_ body: () -> Void) {
        stackLock.withLock { _ in body() }
    }

    /// Advances usrsctp's timers to `now` in whole milliseconds (its
    /// timer wheel ticks in milliseconds). Caller holds `withLock`.
    func advanceTimers(now: Instant) {
        let elapsed: UInt32 = clock.withLock { last in
            guard let previous = last, previous <= now else {
                last = now
                return 0
            }
            let milliseconds = (now - previous).nanoseconds / 1_000_000
            guard milliseconds > 0 else { return 0 }
            let step = min(milliseconds, Int64(UInt32.max))
            last = previous + .milliseconds(step)
            return UInt32(step)
        }
        if elapsed > 0 { swiftlet_sctp_handle_timers(elapsed) }
    }
}
