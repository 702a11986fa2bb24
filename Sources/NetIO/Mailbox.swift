import CShim
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How control reaches a worker thread: any thread posts a message, the
/// worker's epoll loop wakes on the eventfd and drains the queue. The lock
/// is taken per control message, never per media packet.
package final class Mailbox<Message: Sendable>: Sendable {
    private let queue = Mutex<[Message]>([])
    /// Readable (non-zero counter) while messages are waiting.
    package let eventDescriptor: Int32

    package init() {
        eventDescriptor = swiftlet_eventfd_create()
        precondition(eventDescriptor >= 0, "eventfd failed: \(errno)")
    }

    deinit { close(eventDescriptor) }

    package func post(_ message: Message) {
        queue.withLock { $0.append(message) }
        wake()
    }

    /// Makes the eventfd readable without a message (a stop request).
    package func wake() {
        var one: UInt64 = 1
        _ = write(eventDescriptor, &one, 8)
    }

    /// Blocks the calling thread until a message is waiting or
    /// `milliseconds` pass (for a thread that only drains this mailbox,
    /// with no epoll loop of its own). True when woken by a post.
    @discardableResult
    package func wait(milliseconds: Int32) -> Bool {
        var fd = pollfd(fd: eventDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, milliseconds) > 0
    }

    /// Takes every waiting message into `drained` (emptied first), oldest
    /// first, and clears the wakeup. The queue and `drained` swap storage,
    /// so a caller that keeps `drained` between calls allocates nothing in
    /// steady state (`drain()` copies the queue out, and emptying a queue
    /// whose storage is shared with that copy allocates a new one).
    package func drain(into drained: inout [Message]) {
        var counter: UInt64 = 0
        _ = read(eventDescriptor, &counter, 8)
        drained.removeAll(keepingCapacity: true)
        queue.withLock { q in swap(&q, &drained) }
    }

    /// Takes every waiting message, oldest first, and clears the wakeup.
    package func drain() -> [Message] {
        var counter: UInt64 = 0
        _ = read(eventDescriptor, &counter, 8)
        return queue.withLock { q in
            let out = q
            q.removeAll(keepingCapacity: true)
            return out
        }
    }
}
