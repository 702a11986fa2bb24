#if canImport(Glibc)
    import Glibc
#endif

/// A joinable OS thread for a worker loop. Swift concurrency is for the
/// control plane; media workers are plain threads that never suspend.
public final class WorkerThread: @unchecked Sendable {
    private var thread = pthread_t()
    private var started = false

    private final class Body: @unchecked Sendable {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    public init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
                body.run()
                return nil
            }, context)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        started = true
    }

    /// Waits for the thread to finish.
    public func join() {
        guard started else { return }
        pthread_join(thread, nil)
        started = false
    }
}
