import Cluster
import ClusterService
import DTLS
import Foundation
import HTTPClient
import ICE
import MediaRouter
import MediaWorker
import NetIO
import Rooms
import SignalingServer
import Synchronization
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// `--redis`: this node joins the cluster (docs/CLUSTER.md): a record
/// rewritten every 2 s with its addresses, limits and load, the live nodes
/// read back, and room placement for the cluster (`ClusterAgent.placeRoom`).
/// Room WebSocket joins and WHIP/WHEP requests are placed by their room and
/// proxied to the room's node when it is another (the cascade of a room
/// over several nodes is the next step of issue #15).
enum ServeCluster {
    /// The agent once started, for `/metrics` (made before the signalling
    /// server, filled after).
    final class Slot: Sendable {
        private let agent = Mutex<ClusterAgent?>(nil)
        private let signaling = Mutex<SignalingServer?>(nil)
        private let media = Mutex<MediaPlane?>(nil)
        func set(_ a: ClusterAgent, _ server: SignalingServer, _ plane: MediaPlane) {
            agent.withLock { $0 = a }
            signaling.withLock { $0 = server }
            media.withLock { $0 = plane }
        }
        var current: ClusterAgent? { agent.withLock { $0 } }

        /// Prometheus text: whether the last refresh reached Redis, the
        /// live nodes it read, and refreshes done.
        func prometheus() -> String {
            guard let a = current else { return "" }
            let c = a.cascadeFigures
            let (connected, nodes): (Int, Int) =
                switch a.status {
                case .connected(let n): (1, n.count)
                case .disconnected, .starting: (0, 0)
                }
            return """
                # HELP swiftlet_cluster_connected 1 when the last refresh of this node's record reached Redis.
                # TYPE swiftlet_cluster_connected gauge
                swiftlet_cluster_connected \(connected)
                # HELP swiftlet_cluster_nodes Live nodes (records not expired) at the last refresh.
                # TYPE swiftlet_cluster_nodes gauge
                swiftlet_cluster_nodes \(nodes)
                # HELP swiftlet_cluster_refreshes_total Successful refreshes of this node's record.
                # TYPE swiftlet_cluster_refreshes_total counter
                swiftlet_cluster_refreshes_total \(a.refreshCount)
                # HELP swiftlet_cluster_rooms_claimed Rooms whose home in Redis is this node.
                # TYPE swiftlet_cluster_rooms_claimed gauge
                swiftlet_cluster_rooms_claimed \(a.claimedRoomCount)
                # HELP swiftlet_cluster_room_releases_total Room homes released in Redis after the room ended here.
                # TYPE swiftlet_cluster_room_releases_total counter
                swiftlet_cluster_room_releases_total \(a.releaseCount)
                # HELP swiftlet_cluster_stale_rooms_dropped_total Rooms dropped here because their home moved to another node or epoch.
                # TYPE swiftlet_cluster_stale_rooms_dropped_total counter
                swiftlet_cluster_stale_rooms_dropped_total \(a.staleDropCount)
                # HELP swiftlet_cluster_redis_errors_total Redis calls that failed or were refused (refreshes, resyncs, placements).
                # TYPE swiftlet_cluster_redis_errors_total counter
                swiftlet_cluster_redis_errors_total \(a.redisErrorCount)
                # HELP swiftlet_cluster_redis_round_trip_seconds Time of the last refresh's Redis calls (record and live nodes).
                # TYPE swiftlet_cluster_redis_round_trip_seconds gauge
                swiftlet_cluster_redis_round_trip_seconds \(a.lastRefreshRoundTrip.map { String(Double($0.nanoseconds) / 1e9) } ?? "NaN")
                # HELP swiftlet_cluster_room_parts Rooms this node serves a part of, as written to Redis (the cascade).
                # TYPE swiftlet_cluster_room_parts gauge
                swiftlet_cluster_room_parts \(c.partsWritten)
                # HELP swiftlet_cluster_room_parts_oversized_total Parts of rooms too large for their record, not written.
                # TYPE swiftlet_cluster_room_parts_oversized_total counter
                swiftlet_cluster_room_parts_oversized_total \(c.oversized)
                # HELP swiftlet_cluster_room_events_subscribed 1 while the room-events wake-up subscription is up.
                # TYPE swiftlet_cluster_room_events_subscribed gauge
                swiftlet_cluster_room_events_subscribed \(c.subscribed ? 1 : 0)
                # HELP swiftlet_cluster_room_events_total Room wake-ups received (another node changed its part of a room).
                # TYPE swiftlet_cluster_room_events_total counter
                swiftlet_cluster_room_events_total \(c.events)

                """ + proxyLines() + relayLines()
        }

        private func relayLines() -> String {
            guard let plane = media.withLock({ $0 }) else { return "" }
            let (kept, connected) = plane.nodeRelayCounts
            var out = """
                # HELP swiftlet_cluster_relay_links Relay transports to other live nodes (one per node pair), by state.
                # TYPE swiftlet_cluster_relay_links gauge
                swiftlet_cluster_relay_links{state="connected"} \(connected)
                swiftlet_cluster_relay_links{state="connecting"} \(kept - connected)

                """
            let traffic = plane.nodeRelayTraffic.sorted { $0.key < $1.key }
            guard !traffic.isEmpty else { return out }
            out += """
                # HELP swiftlet_cluster_relay_packets_total Relayed media packets on the relay to each peer node, by direction.
                # TYPE swiftlet_cluster_relay_packets_total counter

                """
            for (peer, t) in traffic {
                out += "swiftlet_cluster_relay_packets_total{peer=\"\(peer)\",direction=\"out\"} \(t.mediaPacketsOut)\n"
                out += "swiftlet_cluster_relay_packets_total{peer=\"\(peer)\",direction=\"in\"} \(t.mediaPacketsIn)\n"
            }
            out += """
                # HELP swiftlet_cluster_relay_bytes_total Bytes of relayed media (before SRTP) on the relay to each peer node, by direction.
                # TYPE swiftlet_cluster_relay_bytes_total counter

                """
            for (peer, t) in traffic {
                out += "swiftlet_cluster_relay_bytes_total{peer=\"\(peer)\",direction=\"out\"} \(t.mediaBytesOut)\n"
                out += "swiftlet_cluster_relay_bytes_total{peer=\"\(peer)\",direction=\"in\"} \(t.mediaBytesIn)\n"
            }
            out += """
                # HELP swiftlet_cluster_relay_control_packets_total Sender reports and feedback on the relay to each peer node, by direction.
                # TYPE swiftlet_cluster_relay_control_packets_total counter

                """
            for (peer, t) in traffic {
                out += "swiftlet_cluster_relay_control_packets_total{peer=\"\(peer)\",direction=\"out\"} \(t.controlPacketsOut)\n"
                out += "swiftlet_cluster_relay_control_packets_total{peer=\"\(peer)\",direction=\"in\"} \(t.controlPacketsIn)\n"
            }
            return out + "\n"
        }

        private func proxyLines() -> String {
            guard let p = signaling.withLock({ $0 })?.proxyStatistics else { return "" }
            return """
                # HELP swiftlet_cluster_proxied_sessions Room WebSockets this node proxies now to the node that holds their room.
                # TYPE swiftlet_cluster_proxied_sessions gauge
                swiftlet_cluster_proxied_sessions \(p.sessions)
                # HELP swiftlet_cluster_proxied_opened_total Proxied sessions whose upstream opened.
                # TYPE swiftlet_cluster_proxied_opened_total counter
                swiftlet_cluster_proxied_opened_total \(p.opened)
                # HELP swiftlet_cluster_proxied_lost_total Proxied sessions that lost the room's node (the client was told to resume).
                # TYPE swiftlet_cluster_proxied_lost_total counter
                swiftlet_cluster_proxied_lost_total \(p.lost)
                # HELP swiftlet_cluster_proxied_messages_total Room protocol messages relayed by the proxy, by direction.
                # TYPE swiftlet_cluster_proxied_messages_total counter
                swiftlet_cluster_proxied_messages_total{direction="to_home"} \(p.messagesToHome)
                swiftlet_cluster_proxied_messages_total{direction="from_home"} \(p.messagesFromHome)
                # HELP swiftlet_cluster_proxied_http_requests_in_flight WHIP/WHEP requests waiting now on the node that holds their room.
                # TYPE swiftlet_cluster_proxied_http_requests_in_flight gauge
                swiftlet_cluster_proxied_http_requests_in_flight \(p.httpInFlight)
                # HELP swiftlet_cluster_proxied_http_requests_total WHIP/WHEP requests sent to the room's node, by outcome: its answer relayed (any status), failed (no connection or a bad answer: 502), timeout (no answer by the request timeout: 504), cancelled (the client left first).
                # TYPE swiftlet_cluster_proxied_http_requests_total counter
                swiftlet_cluster_proxied_http_requests_total{outcome="relayed"} \(p.httpRelayed)
                swiftlet_cluster_proxied_http_requests_total{outcome="failed"} \(p.httpFailed)
                swiftlet_cluster_proxied_http_requests_total{outcome="timeout"} \(p.httpTimedOut)
                swiftlet_cluster_proxied_http_requests_total{outcome="cancelled"} \(p.httpCancelled)

                """
        }
    }

    /// Starts the agent: the node's id is its name (`--node-name`, else the
    /// host name) and a boot nonce.
    static func start(
        _ options: ServeOptions, endpoint: RedisEndpoint, httpAddress: String, media: MediaPlane,
        signaling: SignalingServer, loads: WorkerLoadMeter, into slot: Slot
    ) -> ClusterAgent {
        let name = options.nodeName ?? hostName()
        let id = NodeID(name: name, nonce: UInt64.random(in: 1...UInt64.max))
        // The relay transports to other nodes (the cascade): this node's
        // half of their ICE credentials and its fingerprint go in its
        // record, so nodes pair up from Redis alone.
        let relay = NodeRelayParameters(
            ufrag: ICECredentials.randomICEString(length: ICECredentials.generatedUfragLength),
            password: ICECredentials.randomICEString(length: ICECredentials.generatedPasswordLength),
            fingerprint: media.certificate.fingerprint(.sha256).sdpValue)
        let relayAddress = media.relayAddress.map { SocketAddress($0).description } ?? ""
        let record = NodeRecord(
            id: id, httpAddress: httpAddress, relayAddress: relayAddress, region: options.region,
            limits: options.nodeLimits, relay: relayAddress.isEmpty ? nil : relay)
        let service = signaling.service
        let cpu = CPUShareMeter()
        let agent = ClusterAgent(endpoint: endpoint, record: record) {
            let s = service.snapshot
            let forwarded = loads.read().reduce(0.0) { $0 + $1.forwardedPacketsPerSecond }
            return NodeLoad(
                rooms: s.rooms, participants: s.participants, forwardedPacketsPerSecond: Int(forwarded),
                cpu: cpu.read())
        }
        slot.set(agent, signaling, media)
        let cascade = CascadeRooms(me: id, service: service, media: media)
        signaling.joinCluster(AgentRouting(agent: agent, cascade: cascade))
        // Each refresh keeps this node's room homes true in Redis: rooms
        // that ended are released, a room whose home moved is dropped here.
        agent.setRoomHooks(
            ClusterRoomHooks(
                localRooms: { service.roomNames },
                dropStale: { room, home in
                    service.dropStaleRoom(
                        room, reason: home.map { "its home is \($0.node) at epoch \($0.epoch)" } ?? "its home is unreadable")
                },
                nodesRead: { nodes in
                    media.setNodeRelays(relayLinks(for: record, among: nodes, local: media.relayAddress))
                    // Proxied clients arrive from the other nodes' addresses.
                    signaling.clusterPeers.replace(
                        with: nodes.filter { $0.id != record.id }.compactMap { RoomService.endpoint($0.httpAddress)?.address })
                }))
        agent.setCascadeHooks(cascade.hooks)
        agent.start()
        return agent
    }

    /// The relay transports `me` keeps to the other live nodes
    /// (`NodeRelayPlan`), in the media workers' terms. A record whose
    /// address or fingerprint does not parse is left out.
    static func relayLinks(for me: NodeRecord, among nodes: [NodeRecord], local: TransportAddress?) -> [NodeRelayLink] {
        guard let local else { return [] }
        return NodeRelayPlan.peers(of: me, among: nodes).compactMap { peer in
            guard let remote = SocketAddress(hostAndPort: peer.remoteAddress)?.transportAddress,
                let fingerprint = CertificateFingerprint(sdpValue: peer.remoteFingerprint)
            else { return nil }
            return NodeRelayLink(
                node: peer.node.rawValue, isClient: peer.isClient,
                localCredentials: ICECredentials(ufrag: peer.localUfrag, password: peer.localPassword),
                remoteCredentials: ICECredentials(ufrag: peer.remoteUfrag, password: peer.remotePassword),
                remoteFingerprint: fingerprint, remote: remote, local: local)
        }
    }

    /// Joins placed through the agent (docs/CLUSTER.md): the room's home
    /// from the claim, its HTTP address from the live records the agent
    /// read at its last refresh.
    struct AgentRouting: ClusterRouting {
        let agent: ClusterAgent
        let cascade: CascadeRooms
        var nodeID: String { agent.record.id.rawValue }

        var unavailableReason: String? {
            switch agent.status {
            case .connected: nil
            case .starting: "not registered with Redis yet"
            case .disconnected(let reason): "redis: \(reason)"
            }
        }

        func route(room: String, identity: String?, arrivedVia: String?) -> ClusterRoute {
            let home: RoomHome
            let target: NodeID
            do {
                if arrivedVia != nil {
                    // The entry node chose this node: served here, as the
                    // home or as a part of the room.
                    home = try agent.placeRoom(room)
                    agent.serveHere(room, home: home)
                    return .here(epoch: home.epoch)
                }
                (home, target) = try agent.placeParticipant(room, identity: identity)
            } catch {
                return .unavailable(error.description)
            }
            if target == agent.record.id { return .here(epoch: home.epoch) }
            // The last refresh's records, else a read: a node that
            // registered since this node's last refresh is known at once.
            let found: NodeRecord?
            do { found = try agent.liveRecord(of: target) } catch { return .unavailable(error.description) }
            guard let record = found else {
                return .unavailable("the room's node \(target) has no live record: join again")
            }
            return .elsewhere(node: target.rawValue, httpAddress: record.httpAddress, epoch: home.epoch)
        }

        func home(of room: String) -> ClusterRoute? {
            let stored: StoredRoomHome
            do { stored = try agent.storedHome(room) } catch { return .unavailable(error.description) }
            guard case .home(let node, let epoch) = stored else { return nil }
            if node == agent.record.id { return .here(epoch: epoch) }
            let found: NodeRecord?
            do { found = try agent.liveRecord(of: node) } catch { return .unavailable(error.description) }
            // A home whose node died: nobody serves the room now.
            guard let record = found else { return nil }
            return .elsewhere(node: node.rawValue, httpAddress: record.httpAddress, epoch: epoch)
        }

        func route(sessionNode node: String) -> ClusterRoute {
            // Not a node id (the session id came from a URL): no such
            // session anywhere, answered here (404).
            guard node != agent.record.id.rawValue, let id = NodeID(validating: node) else { return .here(epoch: 0) }
            let found: NodeRecord?
            do { found = try agent.liveRecord(of: id) } catch { return .unavailable(error.description) }
            // No live record: the session went with its node, and this
            // node answers that it has no such session.
            guard let record = found else { return .here(epoch: 0) }
            return .elsewhere(node: node, httpAddress: record.httpAddress, epoch: 0)
        }

        func remoteParts(of room: String) -> [String: [RemoteParticipant]] {
            do {
                let home = try agent.placeRoom(room)
                return cascade.remoteParticipants(try agent.readParts(of: room, epoch: home.epoch), room: room)
            } catch {
                return [:]
            }
        }
    }

    /// A node name from the host name, cut to what `NodeID` allows.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "swiftlet" }
        let raw = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let kept = String(raw.filter { NodeID.isValidName(String($0)) }.prefix(64))
        return kept.isEmpty ? "swiftlet" : kept
    }
}

/// The process's share of all cores since the previous read (0...1), from
/// /proc/self/stat's CPU seconds: the load a node reports to the cluster.
final class CPUShareMeter: Sendable {
    private let last = Mutex<(cpu: Double, at: Double)?>(nil)
    private let cores = Double(max(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 1))

    func read() -> Double {
        guard let sample = ProcessMetrics.sample() else { return 0 }
        let now = Double(MonotonicClock.now().nanoseconds) / 1e9
        return last.withLock { previous in
            defer { previous = (sample.cpuSeconds, now) }
            guard let p = previous, now > p.at else { return 0 }
            return min(max((sample.cpuSeconds - p.cpu) / (now - p.at) / cores, 0), 1)
        }
    }
}
