import Foundation
import MediaRecorder
import MediaWorker
import NetIO
import SignalingServer
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// What `swiftlet serve` does after its first SIGTERM or SIGINT
/// (docs/OPERATIONS.md):
///
/// 1. Say so, with the deadline, and that a second signal stops at once.
/// 2. Drain: HTTP goes on (`/readyz` 503, `/healthz`, `/metrics`); new
///    joins and WHIP/WHEP offers get 503 with `Retry-After`; connected
///    participants hear `going-away` with the deadline.
/// 3. When every participant has left, or at the deadline: room
///    WebSockets get a close frame with 1001 (waiting up to a second for
///    the clients' closes), every media transport sends DTLS close_notify,
///    every recording is closed with its trailer (playable, seekable),
///    the workers stop, exit 0.
///
/// A second SIGTERM or SIGINT during step 2 skips to step 3 without
/// waiting for the WebSocket closing handshakes, and the exit status is
/// 128 + the signal (143 for SIGTERM, 130 for SIGINT), as a shell reports
/// a process a signal stopped: the drain was cut short.
enum ServeDrain {
    static func run(
        after first: Int32, seconds: Int64, signaling: SignalingServer, media: MediaPlane, recorder: Recorder? = nil,
        reload: () -> Void = {}
    ) -> Int32 {
        let deadline = MonotonicClock.now() + .seconds(seconds)
        let wallDeadline = Date().addingTimeInterval(TimeInterval(seconds))
        let epochMilliseconds = Int64((wallDeadline.timeIntervalSince1970 * 1000).rounded())
        print(
            "swiftlet: \(name(first)): draining until \(ISO8601DateFormatter().string(from: wallDeadline)) (\(seconds) s):"
                + " no new joins, /readyz answers 503; send SIGTERM or SIGINT again to stop at once")
        fflush(nil)
        signaling.drain(until: deadline, deadlineEpochMilliseconds: epochMilliseconds)

        var second: Int32?
        while signaling.service.snapshot.participants > 0, MonotonicClock.now() < deadline {
            switch waitForSignal(upTo: .milliseconds(100)) {
            case SIGHUP?: reload()  // the TLS certificate, even while draining
            case let signal?: second = signal
            case nil: break
            }
            if second != nil { break }
        }
        let left = signaling.service.snapshot.participants
        if let second {
            print("swiftlet: \(name(second)) again: stopping now, closing \(left) session(s)")
        } else if left > 0 {
            print("swiftlet: drain deadline: closing \(left) session(s)")
        } else {
            print("swiftlet: every session ended")
        }
        fflush(nil)
        let open = signaling.closeSessions(wait: second == nil ? .seconds(1) : .zero)
        let closed = media.closeAllTransports()
        // Every recording's trailer is written before the workers stop,
        // so each file is complete and seekable (docs/RECORDING.md).
        recorder?.stop()
        signaling.stop()
        media.stop()
        print(
            "swiftlet: closed \(closed) media transport(s) (DTLS close_notify)\(open > 0 ? ", \(open) WebSocket(s) unanswered" : "")"
        )
        print("swiftlet: stopped")
        fflush(nil)
        return second.map { 128 + $0 } ?? 0
    }

    /// SIGTERM, SIGINT or SIGHUP (blocked in every thread since start) if
    /// one arrives within `timeout`; it is consumed. Other signals stay
    /// pending for whoever waits for them.
    static func waitForSignal(upTo timeout: Duration) -> Int32? {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGHUP)
        var wait = timespec(tv_sec: Int(timeout.nanoseconds / 1_000_000_000), tv_nsec: Int(timeout.nanoseconds % 1_000_000_000))
        let signal = sigtimedwait(&set, nil, &wait)
        return signal > 0 ? signal : nil
    }

    static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        default: "signal \(signal)"
        }
    }
}
