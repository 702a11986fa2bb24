import RoomProtocol
import Rooms

extension RoomSpanPlanner {
    /// One worker per room reports its active speakers, so participants
    /// get one list (docs/ARCHITECTURE.md, "Rooms over every worker"). The
    /// reporter is the worker holding the most of the room's subscribers
    /// (participants with a subscriber transport there), then the most
    /// participants, then the lowest index. A worker with a subscriber
    /// receives every track its subscribers take (published there or
    /// relayed to it), and with auto-subscribe that is every audio track of
    /// the room; a worker holding only publishers would hear only its own.
    ///
    /// The choice is sticky: it moves only when another worker scores
    /// strictly higher or the reporter holds no participant any more, so
    /// one join or leave on a tie does not flap the list between workers.
    /// A move is two commands: false to the old reporter, then true to the
    /// new one. The first reporter of a room is told true at once.
    func chooseSpeakerReporter(_ room: inout RoomSpan, _ name: String, _ out: inout [PlannedCommand]) {
        var subscribers: [Int: Set<ParticipantID>] = [:]
        var participants: [Int: Set<ParticipantID>] = [:]
        for (key, w) in room.transports {
            participants[w, default: []].insert(key.participant)
            if key.role == .subscriber { subscribers[w, default: []].insert(key.participant) }
        }
        func score(_ w: Int) -> (Int, Int) { (subscribers[w]?.count ?? 0, participants[w]?.count ?? 0) }
        let best = participants.keys.sorted().max { score($0) < score($1) || (score($0) == score($1) && $0 > $1) }
        let current = room.speakerReporter
        let next: Int?
        if let current, participants[current] != nil, let best, !(score(best) > score(current)) {
            next = current
        } else {
            next = best
        }
        guard next != current else { return }
        // A room that emptied keeps nothing on any worker: no command.
        guard let next else {
            room.speakerReporter = nil
            return
        }
        if let current { out.append(PlannedCommand(worker: current, .setSpeakerReporter(room: name, false))) }
        out.append(PlannedCommand(worker: next, .setSpeakerReporter(room: name, true)))
        room.speakerReporter = next
    }
}
