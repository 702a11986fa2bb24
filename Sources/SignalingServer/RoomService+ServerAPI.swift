import Rooms
import Synchronization
import Webhooks
import Wire

extension RoomService {
    /// Where the rooms' events go (`swiftlet serve --webhook-url`).
    package func attachWebhooks(_ notifier: WebhookNotifier) {
        webhookBox.withLock { $0 = notifier }
        state.withLock { $0.directory.recordsEvents = true }
    }

    /// The webhook sender, when the server has one (the recorder's events
    /// go there too).
    package var webhookNotifier: WebhookNotifier? { webhookBox.withLock { $0 } }

    /// Hands the directory's events to the webhooks, under the rooms lock
    /// so that batches from two threads reach the queues in the order the
    /// directory recorded them (`notify` only appends to bounded queues:
    /// it never waits on a receiver). Without webhooks they are dropped.
    func drainRoomEvents(_ s: inout State) {
        let events = s.directory.takeEvents()
        guard !events.isEmpty, let notifier = webhookBox.withLock({ $0 }) else { return }
        notifier.notify(events)
    }

    /// Runs one server API change on the directory, then carries out its
    /// effects as a participant's own message would.
    func administer<T>(
        _ change: (inout RoomDirectory<RandomIdentifiers>) -> Result<(T, [RoomEffect]), RoomError>
    ) -> Result<T, RoomError> {
        let result = state.withLock { s in
            let r = change(&s.directory)
            drainRoomEvents(&s)
            return r
        }
        switch result {
        case .success(let (value, effects)):
            perform(effects)
            return .success(value)
        case .failure(let error):
            return .failure(error)
        }
    }

    var roomSummaries: [RoomSummary] { state.withLock { $0.directory.roomSummaries } }
    func roomSummary(_ room: String) -> RoomSummary? { state.withLock { $0.directory.roomSummary(room) } }
    func participantSummaries(of room: String) -> [ParticipantSummary]? {
        state.withLock { $0.directory.participantSummaries(of: room) }
    }
}
