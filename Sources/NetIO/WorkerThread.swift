import CShim

#if canImport(Glibc)
    import Glibc
#endif

/// A joinable OS thread for a worker loop. Swift concurrency is for the
/// control plane; media workers are plain threads that never suspend.
package final class WorkerThread: @unchecked Sendable {
    private var thread = pthread_t()
    private var started = false

    private final class Body: @unchecked Sendable {
        let run: () -> Void
        let name: String?
        init(_ run: @escaping () -> Void, name: String?) {
            self.run = run
            self.name = name
        }
    }

    /// `name` (at most 15 bytes: the kernel's TASK_COMM_LEN less the NUL;
    /// longer is cut) shows in /proc/PID/task/TID/comm, top -H and perf, so
    /// a benchmark can tell the media workers apart (Scripts/bench-core).
    package init(name: String? = nil, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body, name: name)).toOpaque()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
                if let name = body.name { swiftlet_set_thread_name(name) }
                body.run()
                return nil
            }, context)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        started = true
    }

    /// Waits for the thread to finish.
    package func join() {
        guard started else { return }
        pthread_join(thread, nil)
        started = false
    }
}
