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

    /// Milliseconds fed to usrsctp's timer wheel so far. Each association
    /// measures its own elapsed time on its owner's clock from the total
    /// at its creation, and the wheel runs to the furthest of them
    /// (`advanceTimers(toTotal:)`): associations on one clock never count
    /// the same milliseconds twice, and a test on a virtual clock never
    /// compares its instants with another clock's.
    private let fedMilliseconds = Mutex<Int64>(0)
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

    /// The milliseconds fed so far (an association's base).
    var totalMilliseconds: Int64 { fedMilliseconds.withLock { $0 } }

    /// Runs usrsctp's timers up to `target` milliseconds in total; nothing
    /// when already there. Caller holds `withLock`.
    func advanceTimers(toTotal target: Int64) {
        let elapsed: Int64 = fedMilliseconds.withLock { fed in
            guard target > fed else { return 0 }
            defer { fed = target }
            return target - fed
        }
        var left = elapsed
        while left > 0 {
            let step = min(left, Int64(UInt32.max))
            swiftlet_sctp_handle_timers(UInt32(step))
            left -= step
        }
    }
}
