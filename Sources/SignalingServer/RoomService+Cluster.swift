import Dispatch
import HTTPClient
import NetIO
import RoomProtocol
import Rooms
import Signaling
import Synchronization

/// Where a new participant of a room is served in a cluster
/// (docs/CLUSTER.md).
package enum ClusterRoute: Equatable, Sendable {
    /// On this node (the room's home, or a part of a room that spans
    /// nodes), at the room's epoch.
    case here(epoch: Int64)
    /// On another node: its id and the HTTP address nodes reach it on
    /// (`http://host:port`).
    case elsewhere(node: String, httpAddress: String, epoch: Int64)
    /// No placement now: why.
    case unavailable(String)
}

/// What `swiftlet serve --redis` gives the signalling side: the room's
/// home for a join, and whether joins can be placed at all.
package protocol ClusterRouting: Sendable {
    /// This node's id, named in the upgrades it proxies.
    var nodeID: String { get }
    /// Nil while joins can be placed; else why not (Redis unreachable).
    /// No I/O: read on the signalling loop.
    var unavailableReason: String? { get }
    /// Where a new participant of `room` is served: the room's home
    /// (placing the room when it has none), or, when the home is full
    /// (`roomNodeCapacity`), another node that serves a part of the room
    /// (the cascade). `identity`: the joining identity (a client that
    /// joins again resumes on the node that serves it); nil for a WHIP or
    /// WHEP session, placed by capacity alone (its follow-ups find it by
    /// its session id, `route(session:room:)`).
    /// `arrivedVia`: the node that proxied this join here (it chose this
    /// node; one hop at most). Talks to Redis (bounded by its command
    /// timeout): called on the placement queue only, never on the
    /// signalling loop or under the rooms' lock.
    func route(room: String, identity: String?, arrivedVia: String?) -> ClusterRoute
    /// Where the WHIP/WHEP session whose id names `node` lives
    /// (`HTTPSessionID`): here, on that live node, or unavailable when the
    /// node has no live record (its sessions went with it). Placement
    /// queue only.
    func route(sessionNode node: String) -> ClusterRoute
    /// The other nodes' parts of `room` as they are in Redis now, as
    /// remote participants by node (only nodes this node has a relay to):
    /// what a WHEP offer answered here plays when this node serves no part
    /// of the room yet. Empty when there are none or Redis cannot say.
    /// Placement queue only.
    func remoteParts(of room: String) -> [String: [RemoteParticipant]]
    /// Where `room` lives now, without placing it (the server API's
    /// room-scoped calls): its home here or on a live node, nil when it
    /// has no home, unavailable when Redis cannot say. Placement queue
    /// only.
    func home(of room: String) -> ClusterRoute?
}

/// The cluster link of a `RoomService`: the routing, the proxy, the
/// serial queue that asks Redis so the signalling loop never waits, and
/// the way back to a client's HTTP session that waits for its request's
/// answer (posted to the signalling loop).
struct ClusterLink: Sendable {
    let routing: any ClusterRouting
    let proxy: SignalingProxy
    let answer: @Sendable (HTTPExchangeKey, DeferredHTTPAnswer) -> Void
    let placement = DispatchQueue(label: "swiftlet-placement")
}

/// A connection's cluster state: waiting for its room's placement (with
/// the messages that came meanwhile), or proxied to the room's node.
struct ClusterSessions {
    var placing: [ConnectionID: [String]] = [:]
    var proxied: Set<ConnectionID> = []
    /// Connections that arrived through another node's proxy: never
    /// proxied again (one hop).
    var arrivedVia: [ConnectionID: String] = [:]
    /// The room's epoch those connections' entry nodes placed them at
    /// (`X-Swiftlet-Epoch`, as sent: checked by `ClusterEpochCheck`).
    var arrivedEpoch: [ConnectionID: String] = [:]
    /// Messages a connection may send before its join is placed.
    static let maxHeld = 32
}

extension RoomService {
    /// Joins the cluster: from now on a join is placed through `routing`
    /// and proxied when its room lives on another node.
    func attachCluster(_ link: ClusterLink) {
        clusterBox.withLock { $0 = link }
        state.withLock { $0.directory.sessionNode = link.routing.nodeID }
    }

    var cluster: ClusterLink? { clusterBox.withLock { $0 } }

    /// A connection that came through another node's proxy (its
    /// `X-Swiftlet-Via`).
    func arrived(_ connection: ConnectionID, via node: String, epoch: String?) {
        state.withLock { s in
            s.cluster.arrivedVia[connection] = node
            s.cluster.arrivedEpoch[connection] = epoch.map { String($0.prefix(20)) }
        }
    }

    /// The cluster's part of a received message: true when it took the
    /// message (proxied, held while placing, or a join sent to placement).
    func interceptForCluster(_ text: String, on connection: ConnectionID, join: JoinRequest?) -> Bool {
        guard let link = cluster else { return false }
        enum Verdict { case proxied, held, overflow, place, proceed }
        let verdict: Verdict = state.withLock { s in
            if s.cluster.proxied.contains(connection) { return .proxied }
            if s.cluster.placing[connection] != nil {
                guard s.cluster.placing[connection]!.count < ClusterSessions.maxHeld else { return .overflow }
                s.cluster.placing[connection]!.append(text)
                return .held
            }
            guard join != nil, s.logIDs.connections[connection]?.participant == nil else { return .proceed }
            s.cluster.placing[connection] = [text]
            return .place
        }
        switch verdict {
        case .proceed: return false
        case .proxied: link.proxy.forward(text, from: connection)
        case .held: break
        case .overflow:
            perform([.send(connection, .error(code: .badRequest, message: "too many messages before the join was placed"))])
        case .place:
            guard let join else { return true }
            if let reason = link.routing.unavailableReason {
                state.withLock { _ = $0.cluster.placing.removeValue(forKey: connection) }
                log(.warning, "join refused: cluster unavailable", fields(connection) + [("reason", reason)])
                perform([.send(connection, .error(code: .unavailable, message: "cluster unavailable: \(reason)"))], logged: true)
                return true
            }
            let via = state.withLock { $0.cluster.arrivedVia[connection] }
            link.placement.async { [self] in
                placed(
                    join, on: connection, route: link.routing.route(room: join.room, identity: join.identity, arrivedVia: via),
                    link: link)
            }
        }
        return true
    }

    /// The placement's answer for a join held since `interceptForCluster`.
    private func placed(_ join: JoinRequest, on connection: ConnectionID, route: ClusterRoute, link: ClusterLink) {
        switch route {
        case .here(let epoch):
            let sent = state.withLock { $0.cluster.arrivedEpoch[connection] }
            if let stale = ClusterEpochCheck.mismatch(sent: sent, here: epoch, room: join.room) {
                refuse(connection, stale)
                return
            }
            let now = MonotonicClock.now()
            let (held, effects): ([String]?, [RoomEffect]) = state.withLock { s in
                guard let held = s.cluster.placing.removeValue(forKey: connection) else { return (nil, []) }
                return (held, s.directory.join(join, connection: connection, now: now))
            }
            guard let held else { return }  // the client left meanwhile
            log(.debug, "room placed here", fields(connection) + [("epoch", "\(epoch)")])
            perform(effects)
            for text in held.dropFirst() { received(text: text, on: connection, now: MonotonicClock.now()) }
        case .elsewhere(let node, let address, let epoch):
            guard let endpoint = Self.endpoint(address) else {
                refuse(connection, "the room's node \(node) advertises an address that is not http://host:port: \(address)")
                return
            }
            let via = state.withLock { $0.cluster.arrivedVia[connection] }
            if via != nil {
                // One hop at most: the entry node's view was stale.
                refuse(connection, "the room moved to node \(node): join again")
                return
            }
            let remote = state.withLock { $0.logIDs.connections[connection]?.remote }
            var headers = HTTPHeaders([
                (SignalingProxy.viaHeader, link.routing.nodeID), (SignalingProxy.epochHeader, "\(epoch)"),
            ])
            if let remote, let host = Self.host(of: remote) { headers.append(name: "X-Forwarded-For", value: host) }
            let opened: Bool = state.withLock { s in
                guard let held = s.cluster.placing.removeValue(forKey: connection) else { return false }
                s.cluster.proxied.insert(connection)
                // Posted under the lock: nothing the client sends next can
                // reach the proxy before its upstream exists.
                link.proxy.open(connection, to: endpoint, headers: headers, messages: held)
                return true
            }
            if opened {
                log(.info, "proxied to the room's node", fields(connection) + [("node", node), ("epoch", "\(epoch)")])
            }
        case .unavailable(let reason):
            refuse(connection, reason)
        }
    }

    private func refuse(_ connection: ConnectionID, _ reason: String) {
        let held = state.withLock { $0.cluster.placing.removeValue(forKey: connection) }
        guard held != nil else { return }
        log(.warning, "join refused: cannot place the room", fields(connection) + [("reason", reason)])
        perform([.send(connection, .error(code: .unavailable, message: reason))], logged: true)
    }

    /// The client's WebSocket ended: a proxied session's upstream ends too
    /// (`code`: the client's 1000/1001, a leave; nil: dropped).
    func clusterClosed(_ connection: ConnectionID, code: WebSocketCloseCode?) {
        guard let link = cluster else { return }
        let proxied = state.withLock { s in
            _ = s.cluster.placing.removeValue(forKey: connection)
            if code == nil {
                s.cluster.arrivedVia[connection] = nil
                s.cluster.arrivedEpoch[connection] = nil
            }
            return code == nil ? s.cluster.proxied.remove(connection) != nil : s.cluster.proxied.contains(connection)
        }
        if proxied { link.proxy.close(connection, code: code) }
    }

    /// Whether a connection joined, is being placed, or is proxied (the
    /// join timeout spares it).
    func hasJoinedOrIsPlaced(_ connection: ConnectionID) -> Bool {
        state.withLock { s in
            s.logIDs.connections[connection]?.participant != nil || s.cluster.placing[connection] != nil
                || s.cluster.proxied.contains(connection)
        }
    }

    /// `http://host:port` (what a node record advertises) as an endpoint.
    package static func endpoint(_ url: String) -> ServerEndpoint? {
        guard url.hasPrefix("http://") else { return nil }
        let authority = String(url.dropFirst("http://".count).prefix { $0 != "/" })
        guard let address = SocketAddress(hostAndPort: authority) else { return nil }
        return ServerEndpoint(address: address, hostHeader: authority, serverName: "", tls: nil)
    }

    /// The host part of `host:port` / `[v6]:port`.
    static func host(of address: String) -> String? {
        if address.hasPrefix("[") { return address.split(separator: "]").first.map { String($0.dropFirst()) } }
        return address.split(separator: ":").first.map(String.init)
    }

    /// The rooms on this node now, for the cluster's resync.
    package var roomNames: [String] { state.withLock { $0.directory.roomNames } }

    /// The cluster found this node's copy of `room` stale (its home in
    /// Redis is another node, or another epoch): every participant leaves
    /// it here and its WebSocket is closed with 1012 (service restart), so
    /// that the client joins again and is placed where the room lives.
    package func dropStaleRoom(_ room: String, reason: String) {
        let (effects, connections) = state.withLock { $0.directory.evict(room: room, reason: reason) }
        guard !connections.isEmpty || !effects.isEmpty else { return }
        log(.warning, "stale room dropped", [("room", room), ("reason", reason), ("participants", "\(connections.count)")])
        perform(effects)
        let outlet = outletBox.withLock { $0 }
        for connection in connections { outlet?.close(connection, code: .serviceRestart, reason: "room moved: join again") }
    }
}

/// Issue #15: every message between nodes about a room carries the room's
/// epoch. A join or WHIP/WHEP request proxied by an entry node carries the
/// epoch it was placed at (`X-Swiftlet-Epoch`); the room's node places it
/// again itself (one Redis script) and serves it only at that same epoch.
/// Another epoch means the room was placed again since the entry node
/// looked (its home died, or Redis restarted empty): the request is
/// refused with the reason and the client comes back through the entry
/// node, which places it afresh. Epochs compare for equality (a Redis
/// restarted empty counts them from 1 again). Proxied media is not
/// checked here: relay packets name tracks this node learnt from the
/// parts' records, which carry the epoch, and a part at another epoch is
/// dropped at its node's next resync.
enum ClusterEpochCheck {
    /// Why a request sent at epoch `sent` (the header as it came; nil: not
    /// proxied, or proxied by its session's node) is not served here at
    /// `here`; nil when it is.
    static func mismatch(sent: String?, here: Int64, room: String) -> String? {
        guard let sent else { return nil }
        guard let epoch = Int64(sent), epoch > 0 else {
            return "the entry node sent room '\(room)' with an unreadable epoch: join again"
        }
        guard epoch != here else { return nil }
        return "room '\(room)' was placed again (epoch \(here); the entry node had epoch \(epoch)): join again"
    }
}
