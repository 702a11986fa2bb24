import NetIO
import RoomProtocol
import Rooms
import Synchronization

/// Worker reports (transport failures, media events) reach the signalling
/// side through a mailbox, never by a call from the worker thread: the
/// rooms layer takes its lock to handle them, and a worker waiting on that
/// lock would stop forwarding for every room it carries (issue #12,
/// docs/ARCHITECTURE.md "Threads"). The plane's delivery thread drains
/// the mailbox and calls the handlers; posting costs the worker a short
/// queue lock and an eventfd write per report (a few per second per room,
/// never per packet).
enum WorkerReport: Sendable {
    /// `failed` false: the peer closed it (DTLS close_notify), a client
    /// leaving rather than a failure.
    case transportFailed(ParticipantID, TransportRole, failed: Bool)
    case media(MediaEvent)
}

/// Shared by the plane and its delivery thread: true until `stop`.
final class DeliveryFlag: Sendable {
    let running = Atomic<Bool>(true)
}

/// Shared by the plane and its delivery thread.
final class TransportFailureHandler: Sendable {
    let handler = Mutex<(@Sendable (ParticipantID, TransportRole, Bool) -> Void)?>(nil)
}

/// Shared by the plane and its delivery thread.
final class MediaEventHandler: Sendable {
    let handler = Mutex<(@Sendable (MediaEvent) -> Void)?>(nil)
}

extension MediaPlane {
    /// The delivery thread's loop, until the flag is cleared; reports that
    /// arrive before a handler is set are dropped.
    static func deliver(
        _ events: Mailbox<WorkerReport>, while flag: DeliveryFlag, failures: TransportFailureHandler,
        reports: MediaEventHandler
    ) {
        // Kept between drains: no allocation per wake-up.
        var drained: [WorkerReport] = []
        while flag.running.load(ordering: .acquiring) {
            events.wait(milliseconds: 250)
            events.drain(into: &drained)
            for report in drained {
                switch report {
                case .transportFailed(let participant, let role, let failed):
                    failures.handler.withLock { $0 }?(participant, role, failed)
                case .media(let event):
                    reports.handler.withLock { $0 }?(event)
                }
            }
        }
    }

    func stopDelivery() {
        delivering.running.store(false, ordering: .releasing)
        events.wake()
    }
}
