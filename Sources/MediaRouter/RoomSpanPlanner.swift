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
///
/// A room may also span nodes (the cascade, docs/CLUSTER.md): a track
/// published on another node (`addRemoteTrack`) and a local track another
/// node wants (`addRemoteSink`) go through the node relays, which live on
/// `nodeRelayWorker`; RoomSpanPlanner+Nodes.swift has those rules.
package struct RoomSpanPlanner: Sendable {
    package let workerCount: Int
    var rooms: [String: RoomSpan] = [:]
    private var nextRelay: UInt32 = 1
    /// Commands refused as a worker refuses one (`commandsIgnored`): a
    /// node command without a relay slot, a remote sink for a track that
    /// came from a node.
    package internal(set) var ignoredCommands = 0

    /// The worker that holds the node's relay transports to other nodes
    /// (docs/CLUSTER.md, "Relays between nodes"): every track that
    /// crosses to or from another node passes through it.
    package static let nodeRelayWorker = 0

    package init(workers: Int) {
        precondition(workers > 0, "a plane has at least one worker")
        workerCount = workers
    }

    /// With a single worker everything goes there, known or not: the
    /// worker keeps a track or subscription that arrives before its
    /// transport, as it always has.
    var onlyWorker: Int? { workerCount == 1 ? 0 : nil }

    /// The commands each worker must run for `command`. A command naming
    /// another node (`addRemoteTrack`, `addRemoteSink`, `removeRemoteSink`)
    /// comes with that node's relay slot in the workers (`nodeSlot`, which
    /// the media plane resolves); without one it is ignored and counted.
    package mutating func plan(_ command: MediaCommand, nodeSlot: Int? = nil) -> [PlannedCommand] {
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
        case .enableDataChannels(_, let participant, _), .sendData(_, let participant, _, _, _):
            // Data channels live on the publisher transport: its worker,
            // whichever worker the sender is on (a room spanning workers
            // relays through the rooms layer, docs/PROTOCOL.md).
            if let w = room.transports[TransportKey(participant: participant, role: .publisher)] ?? onlyWorker {
                out.append(PlannedCommand(worker: w, .media(command)))
            }
        case .addIncomingTrack(_, let participant, let trackID, let description):
            guard let source = room.worker(of: participant, preferring: .publisher) ?? onlyWorker else { break }
            // A republished track: other nodes still want its id (their
            // sinks wait for the new one); local subscribers are forwarded
            // again by the rooms layer.
            if room.tracks[trackID] != nil { removeTrack(&room, name, trackID, keepingNodeSinks: true, &out) }
            room.tracks[trackID] = PublishedTrack(publisher: participant, description: description, source: source)
            out.append(PlannedCommand(worker: source, .media(command)))
            flushPending(&room, name, &out)
        case .removeIncomingTrack(_, _, let trackID):
            room.pending.removeAll { $0.key.trackID == trackID }
            room.pendingNodeSinks.removeAll { $0.trackID == trackID }
            guard let track = room.tracks[trackID] else { break }
            removeTrack(&room, name, trackID, &out)
            // A remote track has no source here: its copy on the relay
            // worker went with `removeTrack`.
            if track.origin == nil { out.append(PlannedCommand(worker: track.source, .media(command))) }
        case .setTrackMuted(_, _, let trackID, _):
            // At the track's source only: what it does not pass on, no
            // relay carries. A remote track is muted on its own node.
            guard let track = room.tracks[trackID], track.origin == nil else { break }
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
        case .addRemoteTrack(_, let participant, let trackID, let description, _, let relay):
            guard let slot = nodeSlot else {
                ignoredCommands += 1
                break
            }
            addRemoteTrack(
                &room, name, trackID, publisher: participant, description: description,
                origin: NodeOrigin(slot: slot, relay: relay), &out)
        case .addRemoteSink(_, let trackID, _, let relay):
            guard let slot = nodeSlot else {
                ignoredCommands += 1
                break
            }
            room.pendingNodeSinks.removeAll { $0.trackID == trackID && $0.slot == slot }
            room.pendingNodeSinks.append(PendingNodeSink(trackID: trackID, slot: slot, relay: relay))
            flushPending(&room, name, &out)
        case .removeRemoteSink(_, let trackID, _):
            guard let slot = nodeSlot else {
                ignoredCommands += 1
                break
            }
            removeNodeSink(&room, name, trackID, slot: slot, &out)
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

    /// The nodes (relay slots) `trackID` is sent to, with the id each
    /// receives it as.
    package func nodeSinks(of trackID: String, in room: String) -> [Int: RelayTrackID] {
        rooms[room]?.nodeSinks[trackID] ?? [:]
    }
    /// Node sinks waiting for their track.
    package func pendingNodeSinks(in room: String) -> Int { rooms[room]?.pendingNodeSinks.count ?? 0 }
    /// Whether the relay worker holds the remote track `trackID` now.
    package func holdsRemoteTrack(_ trackID: String, in room: String) -> Bool {
        rooms[room]?.tracks[trackID]?.isHeldOnRelayWorker ?? false
    }

    package func speakerReporter(of room: String) -> Int? { rooms[room]?.speakerReporter }
    /// Forwards waiting for their track or their subscriber's transport.
    package func pendingForwards(in room: String) -> Int { rooms[room]?.pending.count ?? 0 }
    /// Rooms with any state (bounded by the rooms layer's own limits:
    /// a room is forgotten when its last participant and track go).
    package var roomCount: Int { rooms.count }

    // MARK: Rules

    /// Fans out the pending forwards that can go now, in arrival order,
    /// then the pending node sinks.
    mutating func flushPending(_ room: inout RoomSpan, _ name: String, _ out: inout [PlannedCommand]) {
        var waiting: [PendingForward] = []
        for p in room.pending {
            guard room.tracks[p.key.trackID] != nil,
                let w = room.worker(of: p.key.subscriber, preferring: .subscriber) ?? onlyWorker
            else {
                waiting.append(p)
                continue
            }
            // A forward to a new worker for a subscription held elsewhere
            // (a transport moved) leaves the old relay first.
            if let old = room.subscriptions[p.key], old != w { unsubscribe(&room, name, p.key, &out) }
            // A remote track reaches the relay worker with its first
            // local subscription (not before: a node relay carries only
            // what this node's subscribers take).
            holdRemoteTrack(&room, name, p.key.trackID, &out)
            guard let track = room.tracks[p.key.trackID] else { continue }
            if w != track.source {
                openRingRelay(&room, name, p.key.trackID, to: w, &out)
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
        flushPendingNodeSinks(&room, name, &out)
    }

    /// Makes sure the track crosses from its source worker to worker `w`
    /// (not its source): the first time, `addRelayedTrack` there and
    /// `addRelaySink` at the source under a fresh `RelayTrackID`.
    mutating func openRingRelay(
        _ room: inout RoomSpan, _ name: String, _ trackID: String, to w: Int, _ out: inout [PlannedCommand]
    ) {
        guard let track = room.tracks[trackID], w != track.source, room.relays[trackID]?[w] == nil else { return }
        let relay = RelayTrackID(nextRelay)
        nextRelay = nextRelay == UInt32.max ? 1 : nextRelay + 1
        out.append(
            PlannedCommand(
                worker: w,
                .addRelayedTrack(
                    room: name, publisher: track.publisher, trackID: trackID, description: track.description, relay: relay,
                    from: track.source)))
        out.append(PlannedCommand(worker: track.source, .addRelaySink(room: name, trackID: trackID, relay: relay, to: w)))
        room.relays[trackID, default: [:]][w] = Relay(id: relay)
    }

    /// Forgets a subscription; its ring relay goes with its last far
    /// subscriber (unless node sinks still need it), a remote track's copy
    /// on the relay worker with its last local subscription.
    func unsubscribe(_ room: inout RoomSpan, _ name: String, _ key: PlannedSubscription, _ out: inout [PlannedCommand]) {
        guard let w = room.subscriptions.removeValue(forKey: key) else { return }
        if room.relays[key.trackID]?[w] != nil {
            room.relays[key.trackID]?[w]?.subscribers.remove(key.subscriber)
            closeRingRelayIfUnused(&room, name, key.trackID, to: w, &out)
        }
        releaseRemoteTrackIfUnused(&room, name, key.trackID, &out)
    }

    /// Ends the ring relay of `trackID` to `w` when nothing needs it: no
    /// subscriber there and, on the relay worker, no node sink.
    func closeRingRelayIfUnused(
        _ room: inout RoomSpan, _ name: String, _ trackID: String, to w: Int, _ out: inout [PlannedCommand]
    ) {
        guard let relay = room.relays[trackID]?[w], relay.subscribers.isEmpty else { return }
        if w == Self.nodeRelayWorker, room.nodeSinks[trackID]?.isEmpty == false { return }
        room.relays[trackID]?[w] = nil
        if room.relays[trackID]?.isEmpty == true { room.relays[trackID] = nil }
        if let source = room.tracks[trackID]?.source {
            out.append(PlannedCommand(worker: source, .removeRelaySink(room: name, trackID: trackID, to: w)))
        }
        out.append(PlannedCommand(worker: w, .removeRelayedTrack(room: name, trackID: trackID)))
    }

    /// Ends every relay of a track, in the order the packets flow back:
    /// the sinks to other nodes, the rings to other workers, then a remote
    /// track's copy on the relay worker; forgets its subscriptions (the
    /// workers drop them with the track).
    func tearDownRelays(_ room: inout RoomSpan, _ name: String, _ trackID: String, _ out: inout [PlannedCommand]) {
        for slot in (room.nodeSinks[trackID] ?? [:]).keys.sorted() {
            out.append(PlannedCommand(worker: Self.nodeRelayWorker, .removeRelaySink(room: name, trackID: trackID, to: slot)))
        }
        room.nodeSinks[trackID] = nil
        if let source = room.tracks[trackID]?.source {
            for w in (room.relays[trackID] ?? [:]).keys.sorted() {
                out.append(PlannedCommand(worker: source, .removeRelaySink(room: name, trackID: trackID, to: w)))
                out.append(PlannedCommand(worker: w, .removeRelayedTrack(room: name, trackID: trackID)))
            }
        }
        room.relays[trackID] = nil
        room.subscriptions = room.subscriptions.filter { $0.key.trackID != trackID }
        if room.tracks[trackID]?.isHeldOnRelayWorker == true {
            out.append(PlannedCommand(worker: Self.nodeRelayWorker, .removeRelayedTrack(room: name, trackID: trackID)))
            room.tracks[trackID]?.isHeldOnRelayWorker = false
        }
    }

    /// `keepingNodeSinks`: the nodes that wanted the track wait for the
    /// next track of that id (a republish) instead of being forgotten.
    func removeTrack(
        _ room: inout RoomSpan, _ name: String, _ trackID: String, keepingNodeSinks: Bool = false,
        _ out: inout [PlannedCommand]
    ) {
        if keepingNodeSinks {
            for (slot, relay) in (room.nodeSinks[trackID] ?? [:]).sorted(by: { $0.key < $1.key }) {
                room.pendingNodeSinks.append(PendingNodeSink(trackID: trackID, slot: slot, relay: relay))
            }
        }
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
    /// trackID → node relay slot → the id the track crosses to that node
    /// as (the relay worker sends it there).
    var nodeSinks: [String: [Int: RelayTrackID]] = [:]
    /// Node sinks whose track is not published yet.
    var pendingNodeSinks: [PendingNodeSink] = []
    var speakerReporter: Int?

    var isEmpty: Bool { transports.isEmpty && tracks.isEmpty && pending.isEmpty && pendingNodeSinks.isEmpty }

    /// Every worker holding a part of the room: a transport, a track's
    /// source (a remote track's only while the relay worker holds it), a
    /// relay's far end.
    var workers: Set<Int> {
        var all = Set(transports.values)
        for t in tracks.values where t.origin == nil || t.isHeldOnRelayWorker { all.insert(t.source) }
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
    /// The worker its packets come in on: the publisher's, or for a
    /// remote track the relay worker.
    var source: Int
    /// A remote track: the node relay and id its packets arrive as.
    var origin: NodeOrigin?
    /// A remote track: whether the relay worker holds it now
    /// (`addRelayedTrack(from: slot)` sent, not yet removed).
    var isHeldOnRelayWorker = false
}

/// Where a remote track comes from: a node relay slot and the
/// `RelayTrackID` its source node gave it.
struct NodeOrigin: Equatable, Sendable {
    var slot: Int
    var relay: RelayTrackID
}

/// Another node's wish for a track not published yet.
struct PendingNodeSink: Sendable {
    var trackID: String
    var slot: Int
    var relay: RelayTrackID
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
            .setTrackMuted(let room, _, _, _),
            .addRemoteSink(let room, _, _, _), .removeRemoteSink(let room, _, _), .enableDataChannels(let room, _, _),
            .sendData(let room, _, _, _, _):
            room
        }
    }

    /// The other node a cascade command names, whose relay slot the media
    /// plane resolves; nil for every other command.
    package var relayNode: String? {
        switch self {
        case .addRemoteTrack(_, _, _, _, let node, _), .addRemoteSink(_, _, let node, _), .removeRemoteSink(_, _, let node):
            node
        default: nil
        }
    }
}
