import Negotiation
import RoomProtocol
import Rooms
import WorkerRelay

/// One command for one worker, as the planner fans a rooms-layer command
/// out.
package struct PlannedCommand: Equatable, Sendable, CustomStringConvertible {
    package var worker: Int
    package var command: WorkerCommand
    package init(worker: Int, _ command: WorkerCommand) {
        self.worker = worker
        self.command = command
    }
    package var description: String { "w\(worker): \(command)" }
}

/// The media plane's fan-out of a room over workers (docs/ARCHITECTURE.md,
/// "Rooms over every worker"), sans-IO: it knows which worker holds each
/// participant's transports, each track's source worker (the worker of
/// its publisher's transport), and which far workers relay which tracks,
/// and turns each `MediaCommand` of the rooms layer into the commands each
/// worker must run, in order:
///
/// - `openTransport`, `setRemote`: the participant's worker.
/// - `addIncomingTrack`: the publisher's worker (the track's source);
///   forwards that waited for the track follow.
/// - `forward`: the subscriber's worker. When that is not the source and
///   no relay of the track reaches it yet, first `addRelayedTrack` to it
///   and `addRelaySink` to the source, under a fresh `RelayTrackID`: the
///   track then crosses to that worker once per packet, whatever its
///   number of subscribers there.
/// - `stopForward`, `setPreference`: the subscriber's worker; the relay is
///   torn down (`removeRelaySink` at the source, `removeRelayedTrack` far)
///   when its last far subscriber goes.
/// - `removeIncomingTrack`: the relays torn down, then the source.
/// - `releaseParticipant`: the relays of the participant's tracks and
///   those only it used torn down, then every worker that holds a part of
///   the room.
///
/// A forward whose track is not published yet, or whose subscriber has no
/// transport yet, is kept and fanned out when both are known (the rooms
/// layer emits `addIncomingTrack` and the subscriber's `openTransport`
/// before the forwards today; the planner does not rely on it). A command
/// naming nothing the planner knows goes nowhere, as a worker would ignore
/// it.
///
/// One worker per room reports active speakers (`setSpeakerReporter`): see
/// `chooseSpeakerReporter`.
package struct RoomSpanPlanner: Sendable {
    package let workerCount: Int
    private var rooms: [String: RoomSpan] = [:]
    private var nextRelay: UInt32 = 1

    package init(workers: Int) {
        precondition(workers > 0, "a plane has at least one worker")
        workerCount = workers
    }

    /// With a single worker everything goes there, known or not: the
    /// worker keeps a track or subscription that arrives before its
    /// transport, as it always has.
    private var onlyWorker: Int? { workerCount == 1 ? 0 : nil }

    package mutating func plan(_ command: MediaCommand) -> [PlannedCommand] {
        var out: [PlannedCommand] = []
        let name = command.roomName
        var room = rooms[name] ?? RoomSpan()
        switch command {
        case .openTransport(_, let worker, let participant, let role, let local, let remote):
            let w = ((worker % workerCount) + workerCount) % workerCount
            room.transports[TransportKey(participant: participant, role: role)] = w
            // The worker opens only a command naming its own index.
            out.append(
                PlannedCommand(
                    worker: w,
                    .media(
                        .openTransport(
                            room: name, worker: w, participant: participant, role: role, local: local, remote: remote))))
            flushPending(&room, name, &out)
        case .setRemote(_, let participant, let role, _):
            if let w = room.transports[TransportKey(participant: participant, role: role)] ?? onlyWorker {
                out.append(PlannedCommand(worker: w, .media(command)))
            }
        case .addIncomingTrack(_, let participant, let trackID, let description):
            guard let source = room.worker(of: participant, preferring: .publisher) ?? onlyWorker else { break }
            if room.tracks[trackID] != nil { removeTrack(&room, name, trackID, &out) }
            room.tracks[trackID] = PublishedTrack(publisher: participant, description: description, source: source)
            out.append(PlannedCommand(worker: source, .media(command)))
            flushPending(&room, name, &out)
        case .removeIncomingTrack(_, _, let trackID):
            room.pending.removeAll { $0.key.trackID == trackID }
            guard let track = room.tracks[trackID] else { break }
            removeTrack(&room, name, trackID, &out)
            out.append(PlannedCommand(worker: track.source, .media(command)))
        case .forward(_, let trackID, let subscriber, let outgoing):
            let key = PlannedSubscription(trackID: trackID, subscriber: subscriber)
            room.pending.removeAll { $0.key == key }
            room.pending.append(PendingForward(key: key, outgoing: outgoing))
            flushPending(&room, name, &out)
        case .stopForward(_, let trackID, let subscriber):
            let key = PlannedSubscription(trackID: trackID, subscriber: subscriber)
            if let i = room.pending.firstIndex(where: { $0.key == key }) {
                room.pending.remove(at: i)
                break
            }
            guard let w = room.subscriptions[key] ?? room.worker(of: subscriber, preferring: .subscriber) ?? onlyWorker
            else { break }
            out.append(PlannedCommand(worker: w, .media(command)))
            unsubscribe(&room, name, key, &out)
        case .setPreference(_, let trackID, let subscriber, let preference):
            let key = PlannedSubscription(trackID: trackID, subscriber: subscriber)
            if let i = room.pending.firstIndex(where: { $0.key == key }) {
                room.pending[i].preference = preference
                break
            }
            guard let w = room.subscriptions[key] ?? room.worker(of: subscriber, preferring: .subscriber) ?? onlyWorker
            else { break }
            out.append(PlannedCommand(worker: w, .media(command)))
        case .releaseParticipant(_, let participant):
            let holding = onlyWorker.map { [$0] } ?? room.workers
            for (trackID, track) in room.tracks.sorted(by: { $0.key < $1.key }) where track.publisher == participant {
                tearDownRelays(&room, name, trackID, &out)
                room.tracks[trackID] = nil
            }
            for key in room.subscriptions.keys.sorted() where key.subscriber == participant {
                unsubscribe(&room, name, key, &out)
            }
            room.pending.removeAll { $0.key.subscriber == participant }
            room.transports = room.transports.filter { $0.key.participant != participant }
            for w in holding.sorted() { out.append(PlannedCommand(worker: w, .media(command))) }
        case .addRemoteTrack, .addRemoteSink, .removeRemoteSink:
            // Not planned yet: the node relay commands come next.
            break
        }
        chooseSpeakerReporter(&room, name, &out)
        rooms[name] = room.isEmpty ? nil : room
        return out
    }

    // MARK: What the plane and tests may ask

    /// The worker holding `participant`'s transport of `role`, if any.
    package func worker(of participant: ParticipantID, role: TransportRole, in room: String) -> Int? {
        rooms[room]?.transports[TransportKey(participant: participant, role: role)]
    }

    /// The worker a track comes in on.
    package func sourceWorker(of trackID: String, in room: String) -> Int? { rooms[room]?.tracks[trackID]?.source }

    /// Far workers that receive `trackID` through a relay, with the number
    /// of their subscribers.
    package func relays(of trackID: String, in room: String) -> [Int: Int] {
        (rooms[room]?.relays[trackID] ?? [:]).mapValues(\.subscribers.count)
    }

    /// Distinct participants with a transport on each worker.
    package func participantsPerWorker(in room: String) -> [Int: Int] {
        guard let r = rooms[room] else { return [:] }
        var byWorker: [Int: Set<ParticipantID>] = [:]
        for (key, w) in r.transports { byWorker[w, default: []].insert(key.participant) }
        return byWorker.mapValues(\.count)
    }

    package func speakerReporter(of room: String) -> Int? { rooms[room]?.speakerReporter }
    /// Forwards waiting for their track or their subscriber's transport.
    package func pendingForwards(in room: String) -> Int { rooms[room]?.pending.count ?? 0 }
    /// Rooms with any state (bounded by the rooms layer's own limits:
    /// a room is forgotten when its last participant and track go).
    package var roomCount: Int { rooms.count }

    // MARK: Rules

    /// Fans out the pending forwards that can go now, in arrival order.
    private mutating func flushPending(_ room: inout RoomSpan, _ name: String, _ out: inout [PlannedCommand]) {
        var waiting: [PendingForward] = []
        for p in room.pending {
            guard let track = room.tracks[p.key.trackID],
                let w = room.worker(of: p.key.subscriber, preferring: .subscriber) ?? onlyWorker
            else {
                waiting.append(p)
                continue
            }
            // A forward to a new worker for a subscription held elsewhere
            // (a transport moved) leaves the old relay first.
            if let old = room.subscriptions[p.key], old != w { unsubscribe(&room, name, p.key, &out) }
            if w != track.source {
                if room.relays[p.key.trackID]?[w] == nil {
                    let relay = RelayTrackID(nextRelay)
                    nextRelay = nextRelay == UInt32.max ? 1 : nextRelay + 1
                    out.append(
                        PlannedCommand(
                            worker: w,
                            .addRelayedTrack(
                                room: name, publisher: track.publisher, trackID: p.key.trackID,
                                description: track.description, relay: relay, from: track.source)))
                    out.append(
                        PlannedCommand(
                            worker: track.source, .addRelaySink(room: name, trackID: p.key.trackID, relay: relay, to: w)))
                    room.relays[p.key.trackID, default: [:]][w] = Relay(id: relay)
                }
                room.relays[p.key.trackID]?[w]?.subscribers.insert(p.key.subscriber)
            }
            room.subscriptions[p.key] = w
            out.append(
                PlannedCommand(
                    worker: w,
                    .media(.forward(room: name, trackID: p.key.trackID, subscriber: p.key.subscriber, outgoing: p.outgoing))))
            if let preference = p.preference {
                out.append(
                    PlannedCommand(
                        worker: w,
                        .media(
                            .setPreference(
                                room: name, trackID: p.key.trackID, subscriber: p.key.subscriber, preference: preference))))
            }
        }
        room.pending = waiting
    }

    /// Forgets a subscription; its relay goes with its last far subscriber.
    private func unsubscribe(_ room: inout RoomSpan, _ name: String, _ key: PlannedSubscription, _ out: inout [PlannedCommand]) {
        guard let w = room.subscriptions.removeValue(forKey: key) else { return }
        guard var relay = room.relays[key.trackID]?[w] else { return }
        relay.subscribers.remove(key.subscriber)
        guard relay.subscribers.isEmpty else {
            room.relays[key.trackID]?[w] = relay
            return
        }
        room.relays[key.trackID]?[w] = nil
        if room.relays[key.trackID]?.isEmpty == true { room.relays[key.trackID] = nil }
        if let source = room.tracks[key.trackID]?.source {
            out.append(PlannedCommand(worker: source, .removeRelaySink(room: name, trackID: key.trackID, to: w)))
        }
        out.append(PlannedCommand(worker: w, .removeRelayedTrack(room: name, trackID: key.trackID)))
    }

    /// Ends every relay of a track and forgets its subscriptions (the
    /// workers drop them with the track).
    private func tearDownRelays(_ room: inout RoomSpan, _ name: String, _ trackID: String, _ out: inout [PlannedCommand]) {
        if let source = room.tracks[trackID]?.source {
            for w in (room.relays[trackID] ?? [:]).keys.sorted() {
                out.append(PlannedCommand(worker: source, .removeRelaySink(room: name, trackID: trackID, to: w)))
                out.append(PlannedCommand(worker: w, .removeRelayedTrack(room: name, trackID: trackID)))
            }
        }
        room.relays[trackID] = nil
        room.subscriptions = room.subscriptions.filter { $0.key.trackID != trackID }
    }

    private func removeTrack(_ room: inout RoomSpan, _ name: String, _ trackID: String, _ out: inout [PlannedCommand]) {
        tearDownRelays(&room, name, trackID, &out)
        room.tracks[trackID] = nil
    }
}

/// What the planner knows of one room.
struct RoomSpan: Sendable {
    var transports: [TransportKey: Int] = [:]
    var tracks: [String: PublishedTrack] = [:]
    /// trackID → far worker → its relay.
    var relays: [String: [Int: Relay]] = [:]
    /// Where each subscription's forward went.
    var subscriptions: [PlannedSubscription: Int] = [:]
    var pending: [PendingForward] = []
    var speakerReporter: Int?

    var isEmpty: Bool { transports.isEmpty && tracks.isEmpty && pending.isEmpty }

    /// Every worker holding a part of the room: a transport, a track's
    /// source, a relay's far end.
    var workers: Set<Int> {
        var all = Set(transports.values)
        for t in tracks.values { all.insert(t.source) }
        for r in relays.values { all.formUnion(r.keys) }
        return all
    }

    /// The worker of the participant's transport of `role`, else of its
    /// other transport (one participant's transports share a worker).
    func worker(of participant: ParticipantID, preferring role: TransportRole) -> Int? {
        let other: TransportRole = role == .publisher ? .subscriber : .publisher
        return transports[TransportKey(participant: participant, role: role)]
            ?? transports[TransportKey(participant: participant, role: other)]
    }
}

struct PlannedSubscription: Hashable, Comparable, Sendable {
    var trackID: String
    var subscriber: ParticipantID
    static func < (a: Self, b: Self) -> Bool {
        (a.trackID, a.subscriber.rawValue) < (b.trackID, b.subscriber.rawValue)
    }
}

struct PublishedTrack: Sendable {
    var publisher: ParticipantID
    var description: PublishedTrackDescription
    var source: Int
}

struct Relay: Sendable {
    var id: RelayTrackID
    var subscribers: Set<ParticipantID> = []
}

struct PendingForward: Sendable {
    var key: PlannedSubscription
    var outgoing: OutgoingTrack
    /// A preference that came while the forward waited.
    var preference: ReceivePreference?
}

extension MediaCommand {
    /// The room a command is about.
    package var roomName: String {
        switch self {
        case .openTransport(let room, _, _, _, _, _), .setRemote(let room, _, _, _), .addIncomingTrack(let room, _, _, _),
            .removeIncomingTrack(let room, _, _), .forward(let room, _, _, _), .stopForward(let room, _, _),
            .setPreference(let room, _, _, _), .releaseParticipant(let room, _), .addRemoteTrack(let room, _, _, _, _, _),
            .addRemoteSink(let room, _, _, _), .removeRemoteSink(let room, _, _):
            room
        }
    }
}
