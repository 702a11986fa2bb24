import NetIO
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// A signal a thread waits on with a deadline: `wait(until:)` sleeps in
/// `poll(2)` on a pipe until the deadline or until `signal()` writes to
/// it, and it stays signalled until `drain()`. The cluster agent sleeps on
/// it between refreshes, so an idle agent wakes once per refresh, `stop`
/// is still prompt, and a room event (`RoomEventSubscriber`) wakes it at
/// once.
final class StopSignal: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    /// Without a pipe (no descriptor left), waits are cut into slices of
    /// this so a stop is still seen soon.
    static let fallbackSlice: Duration = .milliseconds(100)

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for fd in ends {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
            (readEnd, writeEnd) = (ends[0], ends[1])
        } else {
            (readEnd, writeEnd) = (-1, -1)
        }
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    func signal() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        // A full pipe is signalled already.
        _ = write(writeEnd, &byte, 1)
    }

    /// Takes back every signal so far: the next `wait` sleeps again.
    func drain() {
        guard readEnd >= 0 else { return }
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Sleeps until `deadline` or until signalled. May return earlier
    /// (a signal interrupted it; no pipe, after `fallbackSlice`): callers
    /// check their condition and wait again.
    func wait(until deadline: Instant) {
        let left = deadline - MonotonicClock.now()
        guard left > .zero else { return }
        let slice = readEnd >= 0 ? left : min(left, Self.fallbackSlice)
        let milliseconds = Int32(clamping: (slice.nanoseconds + 999_999) / 1_000_000)
        var entry = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, readEnd >= 0 ? 1 : 0, milliseconds)
    }
}
