import Rooms
import Wire

/// WHEP audiences beyond a room's home (issue #15, docs/CLUSTER.md): the
/// other nodes' parts of a room, read from Redis on the placement queue
/// just before a WHEP offer for that room is answered on this node while
/// it serves no part of the room (`RoomDirectory.whepPlay(...remoteParts:)`).
/// Kept briefly and bounded: a read that nothing uses (the offer was
/// refused, the client went away) costs a slot until it ages out.
struct PreparedRemoteParts {
    /// How long a read stands: the offer is answered right after it.
    static let lifetime: Duration = .seconds(5)
    /// The most rooms kept at once; the oldest goes first.
    static let capacity = 256

    private var entries: [String: (parts: [String: [RemoteParticipant]], at: Instant)] = [:]

    var count: Int { entries.count }

    mutating func store(_ parts: [String: [RemoteParticipant]], of room: String, now: Instant) {
        entries = entries.filter { now - $0.value.at < Self.lifetime }
        if entries[room] == nil, entries.count >= Self.capacity,
            let oldest = entries.min(by: { $0.value.at < $1.value.at })?.key
        {
            entries[oldest] = nil
        }
        entries[room] = (parts, now)
    }

    /// The parts read for `room` within `lifetime`, if any.
    func parts(of room: String, now: Instant) -> [String: [RemoteParticipant]]? {
        guard let entry = entries[room], now - entry.at < Self.lifetime else { return nil }
        return entry.parts
    }
}

extension RoomService {
    /// Whether a local participant is in `room`: then its remote members
    /// are current, and a WHEP offer needs no read of the other parts.
    func servesPart(of room: String) -> Bool {
        state.withLock { $0.directory.hasLocalMember(in: room) }
    }

    /// Keeps `parts` for the WHEP offer for `room` answered next.
    func prepareRemoteParts(_ parts: [String: [RemoteParticipant]], of room: String, now: Instant) {
        state.withLock { $0.preparedParts.store(parts, of: room, now: now) }
    }
}
