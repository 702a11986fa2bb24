import DTLS
import ICE
import PeerSession
import Wire

/// A relay transport to another node of the cluster (issue #15, the
/// cascade; docs/CLUSTER.md): one DTLS-SRTP transport per node pair on
/// each node's first media worker. The node with the lower id is the
/// controlling ICE agent and the DTLS client, the other ICE-lite and the
/// DTLS server, as for a browser; credentials and fingerprints come from
/// the nodes' records in Redis (`Cluster.NodeRelayPlan`).
package struct NodeRelayLink: Equatable, Sendable {
    /// The peer node's id.
    package var node: String
    package var isClient: Bool
    package var localCredentials: ICECredentials
    package var remoteCredentials: ICECredentials
    package var remoteFingerprint: CertificateFingerprint
    /// The peer's relay address (its first worker's port).
    package var remote: TransportAddress
    /// This worker's announced address: the client's host candidate.
    package var local: TransportAddress

    package init(
        node: String, isClient: Bool, localCredentials: ICECredentials, remoteCredentials: ICECredentials,
        remoteFingerprint: CertificateFingerprint, remote: TransportAddress, local: TransportAddress
    ) {
        self.node = node
        self.isClient = isClient
        self.localCredentials = localCredentials
        self.remoteCredentials = remoteCredentials
        self.remoteFingerprint = remoteFingerprint
        self.remote = remote
        self.local = local
    }
}

/// A relay transport the router keeps, and how it stands.
struct NodeRelayEntry {
    var link: NodeRelayLink
    var transport: TransportID?
    /// Set once DTLS is up; back to false when the transport fails.
    var connected = false
    /// Transports opened for this peer (1 + the times it was reopened).
    var opened = 0
}

extension RoomRouter {
    /// The relay transports to keep: one per listed peer. A peer no longer
    /// listed is closed; one whose parameters changed (it restarted: a new
    /// node id, so a new entry) or whose transport failed is opened anew.
    /// Called at every cluster refresh (2 s), so a failed relay is retried
    /// at that pace.
    package func setNodeRelays(_ links: [NodeRelayLink], now: Instant, output: any DatagramOutput) {
        let wanted = Dictionary(links.map { ($0.node, $0) }, uniquingKeysWith: { a, _ in a })
        for (node, entry) in nodeRelays where wanted[node] != entry.link {
            if let id = entry.transport { closeNodeRelay(id, now: now, output: output) }
            nodeRelays[node] = nil
        }
        for link in links {
            var entry = nodeRelays[link.node] ?? NodeRelayEntry(link: link)
            if entry.transport == nil {
                entry.transport = openNodeRelay(link, now: now)
                entry.opened += 1
                entry.connected = false
            }
            nodeRelays[link.node] = entry
        }
    }

    /// Relay transports by peer node: whether each is connected.
    package var nodeRelayStates: [String: Bool] { nodeRelays.mapValues(\.connected) }

    /// Relay transports kept and connected, counted without allocating
    /// (read for every snapshot).
    package var nodeRelayCounts: (kept: Int, connected: Int) {
        var connected = 0
        for entry in nodeRelays.values where entry.connected { connected += 1 }
        return (nodeRelays.count, connected)
    }

    /// Relay transports opened since the start, reopenings included.
    package var nodeRelaysOpened: Int { nodeRelays.values.reduce(0) { $0 + $1.opened } }

    private func openNodeRelay(_ link: NodeRelayLink, now: Instant) -> TransportID? {
        guard
            let t = try? PeerTransport(
                role: link.isClient ? .client : .server, certificate: certificate, localCredentials: link.localCredentials,
                configuration: configuration.transport, now: now)
        else { return nil }
        let id = TransportID(nextTransportNumber)
        nextTransportNumber &+= 1
        // The client's answers come from the peer's address and carry no
        // ufrag: bound in advance. The server learns the client's address
        // from its first check, as for a browser.
        transports.add(t, id: id, boundTo: link.isClient ? link.remote : nil)
        // In the order a client gets them from signalling: its own
        // address, the peer's parameters, then the peer's candidate.
        if link.isClient { t.addLocalCandidate(ICECandidate.host(link.local), now: now) }
        t.setRemoteParameters(credentials: link.remoteCredentials, fingerprints: [link.remoteFingerprint], now: now)
        if link.isClient { t.addRemoteCandidate(ICECandidate.host(link.remote), now: now) }
        nodeRelayNodes[id] = link.node
        return id
    }

    private func closeNodeRelay(_ id: TransportID, now: Instant, output: any DatagramOutput) {
        if let t = transports.transport(id) {
            t.close(now: now)
            transports.flush(id, t, output: output)
        }
        transports.remove(id)
        nodeRelayNodes[id] = nil
    }

    /// A relay transport's event; true when `id` is one.
    func handleNodeRelayEvent(_ id: TransportID, _ event: PeerTransportEvent) -> Bool {
        guard let node = nodeRelayNodes[id] else { return false }
        switch event {
        case .connected:
            nodeRelays[node]?.connected = true
        case .failed, .closed:
            // Reopened at the next `setNodeRelays`.
            transports.remove(id)
            nodeRelayNodes[id] = nil
            if nodeRelays[node]?.transport == id {
                nodeRelays[node]?.transport = nil
                nodeRelays[node]?.connected = false
            }
        default: break
        }
        return true
    }
}
