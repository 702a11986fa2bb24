import MediaRouter
import NetIO
import Wire

extension MediaPlane {
    /// The relay transports to other nodes (docs/CLUSTER.md, the cascade):
    /// kept on the first worker, whose port is the node's relay address.
    /// Posted at every cluster refresh with the whole list; the worker
    /// opens what is new or failed and closes what is gone.
    package func setNodeRelays(_ links: [NodeRelayLink]) {
        // Each peer keeps its slot (its index among the relay links, past
        // the workers) while it stays listed: worker commands name it.
        // The links are posted under the slots' lock, so a command that
        // found a slot (`plan(_:with:)`) reaches the relay worker after
        // the relay it names. The planner's lock is taken first, as
        // `postPlanned` takes them.
        planner.withLock { planner in
            nodeRelaySlots.withLock { slots in
                let listed = Set(links.map(\.node))
                // A dropped node's sinks and tracks end before its relay does.
                for slot in slots.filter({ !listed.contains($0.key) }).values.sorted() {
                    for planned in planner.forgetNode(slot: slot) { post(planned) }
                }
                slots = slots.filter { listed.contains($0.key) }
                let links = links.map { link in
                    var link = link
                    if let slot = slots[link.node] {
                        link.slot = slot
                    } else {
                        let used = Set(slots.values)
                        let slot = (workers.count...).first { !used.contains($0) } ?? workers.count
                        slots[link.node] = slot
                        link.slot = slot
                    }
                    return link
                }
                workers[RoomSpanPlanner.nodeRelayWorker].mailbox.post { engine, now, transmit in
                    engine.router.setNodeRelays(links, now: now, output: transmit)
                }
            }
        }
    }

    /// Cascade commands ignored because their node had no relay slot.
    package var nodeCommandsIgnored: Int { nodeCommandsWithoutSlot.load(ordering: .relaxed) }

    /// The relay slot of each peer node now (`NodeRelayLink.slot`).
    package var nodeRelaySlotTable: [String: Int] { nodeRelaySlots.withLock { $0 } }

    /// The first worker's relay transports: kept and connected.
    package var nodeRelayCounts: (kept: Int, connected: Int) {
        guard let s = cells.first?.read() else { return (0, 0) }
        return (s.nodeRelays, s.nodeRelaysConnected)
    }

    /// Traffic per peer node's relay, from the first worker's snapshot.
    package var nodeRelayTraffic: [String: NodeRelayTraffic] { cells.first?.read()?.nodeRelayTraffic ?? [:] }

    /// The address other nodes reach this node's relay on: the first
    /// worker's port on its first announced address.
    package var relayAddress: TransportAddress? {
        endpoint.workers.first?.first { $0.transport == .udp }?.address
    }
}
