import MediaRouter
import NetIO
import Wire

extension MediaPlane {
    /// The relay transports to other nodes (docs/CLUSTER.md, the cascade):
    /// kept on the first worker, whose port is the node's relay address.
    /// Posted at every cluster refresh with the whole list; the worker
    /// opens what is new or failed and closes what is gone.
    package func setNodeRelays(_ links: [NodeRelayLink]) {
        workers[0].mailbox.post { engine, now, transmit in
            engine.router.setNodeRelays(links, now: now, output: transmit)
        }
    }

    /// The first worker's relay transports: kept and connected.
    package var nodeRelayCounts: (kept: Int, connected: Int) {
        guard let s = cells.first?.read() else { return (0, 0) }
        return (s.nodeRelays, s.nodeRelaysConnected)
    }

    /// The address other nodes reach this node's relay on: the first
    /// worker's port on its first announced address.
    package var relayAddress: TransportAddress? {
        endpoint.workers.first?.first { $0.transport == .udp }?.address
    }
}
