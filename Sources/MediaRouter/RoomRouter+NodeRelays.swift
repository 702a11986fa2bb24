import DTLS
import ICE
import PeerSession
import Wire
import WorkerRelay

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
    /// The peer's index among this router's relay links: where worker
    /// commands name it (`addRelaySink(to:)`, `addRelayedTrack(from:)`),
    /// past the node's own workers (the media plane assigns it; -1 until
    /// then, and a link without a slot is not kept).
    package var slot: Int

    package init(
        node: String, isClient: Bool, localCredentials: ICECredentials, remoteCredentials: ICECredentials,
        remoteFingerprint: CertificateFingerprint, remote: TransportAddress, local: TransportAddress, slot: Int = -1
    ) {
        self.slot = slot
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
    let channel: NodeRelayChannel
    var transport: TransportID? {
        get { channel.transport }
        nonmutating set { channel.transport = newValue }
    }
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
            disconnectRelaySlot(entry.link.slot, channel: entry.channel)
            nodeRelays[node] = nil
        }
        for link in links where link.slot >= 0 && link.slot < RoomRouter.maxRelaySlots {
            var entry =
                nodeRelays[link.node]
                ?? NodeRelayEntry(
                    link: link,
                    channel: NodeRelayChannel(node: link.node, slot: link.slot, engine: transports, output: output))
            entry.channel.output = output
            if entry.transport == nil {
                entry.transport = openNodeRelay(link, channel: entry.channel, now: now)
                entry.opened += 1
                entry.connected = false
            }
            nodeRelays[link.node] = entry
            connectRelaySlot(link.slot, channel: entry.channel)
        }
    }

    /// Relay slots (worker and node indices) a router accepts.
    package static let maxRelaySlots = 1024

    /// The node relay at `slot` carries relay messages both ways, as a
    /// ring to another worker does.
    private func connectRelaySlot(_ slot: Int, channel: NodeRelayChannel) {
        while relaySourceLinks.count <= slot { relaySourceLinks.append(nil) }
        while relayFeedbackLinks.count <= slot { relayFeedbackLinks.append(nil) }
        relaySourceLinks[slot] = channel
        relayFeedbackLinks[slot] = channel
    }

    /// The peer is gone: its slot carries nothing, and what this side
    /// relayed to it or received from it ends (a relayed track's
    /// subscribers keep their subscription and get the track again when
    /// the room's cluster layer relays it anew).
    private func disconnectRelaySlot(_ slot: Int, channel: NodeRelayChannel) {
        if relaySourceLinks.indices.contains(slot), relaySourceLinks[slot] === channel { relaySourceLinks[slot] = nil }
        if relayFeedbackLinks.indices.contains(slot), relayFeedbackLinks[slot] === channel {
            relayFeedbackLinks[slot] = nil
        }
        for track in Array(tracks.values) {
            if track.relaySource?.worker == slot { removeTrack(track) }
            for sink in track.relaySinks where sink.key.worker == slot && relaySinkTracks[sink.key] === track {
                relaySinkTracks[sink.key] = nil
            }
            track.relaySinks.removeAll { $0.key.worker == slot }
        }
    }

    /// Whether relay slot `slot` is a node relay rather than the ring to
    /// another worker of this node (the media plane gives node relays the
    /// slots past its workers; a router is told which in `setNodeRelays`).
    /// Read by relay commands, never per packet.
    func isNodeRelaySlot(_ slot: Int) -> Bool { nodeRelays.values.contains { $0.link.slot == slot } }

    /// Relay transports by peer node: whether each is connected.
    package var nodeRelayStates: [String: Bool] { nodeRelays.mapValues(\.connected) }

    /// Relay transports kept and connected, counted without allocating
    /// (read for every snapshot).
    package var nodeRelayCounts: (kept: Int, connected: Int) {
        var connected = 0
        for entry in nodeRelays.values where entry.connected { connected += 1 }
        return (nodeRelays.count, connected)
    }

    /// Traffic on each peer node's relay, by node id (for `/metrics`).
    package var nodeRelayTraffic: [String: NodeRelayTraffic] { nodeRelays.mapValues { $0.channel.traffic } }

    /// Relay transports opened since the start, reopenings included.
    package var nodeRelaysOpened: Int { nodeRelays.values.reduce(0) { $0 + $1.opened } }

    private func openNodeRelay(_ link: NodeRelayLink, channel: NodeRelayChannel, now: Instant) -> TransportID? {
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
        nodeRelayChannels[id] = channel
        return id
    }

    private func closeNodeRelay(_ id: TransportID, now: Instant, output: any DatagramOutput) {
        if let t = transports.transport(id) {
            t.close(now: now)
            transports.flush(id, t, output: output)
        }
        transports.remove(id)
        nodeRelayChannels[id] = nil
    }

    /// A decrypted RTP packet of a relay transport: relayed media.
    func handleNodeRelayRTP(
        _ packet: UnsafeRawBufferPointer, on channel: NodeRelayChannel, now: Instant, output: any DatagramOutput
    ) {
        channel.traffic.mediaPacketsIn &+= 1
        channel.traffic.mediaBytesIn &+= UInt64(packet.count)
        do {
            guard case .media(let relay, let layer, let rtx, let media) = try NodeRelayFraming.decodeMedia(packet) else { return }
            receiveRelayedMedia(
                relay, layer: layer, isRetransmission: rtx, packet: media, from: channel.slot, now: now, output: output)
        } catch {
            counters.dropped.malformed &+= 1
        }
    }

    /// A decrypted RTCP packet of a relay transport: a sender report or
    /// feedback.
    func handleNodeRelayRTCP(
        _ packet: UnsafeRawBufferPointer, on channel: NodeRelayChannel, now: Instant, output: any DatagramOutput
    ) {
        channel.traffic.controlPacketsIn &+= 1
        do {
            switch try NodeRelayFraming.decodeControl(packet) {
            case .senderReport(let relay, let layer, let ntp, let rtpTimestamp):
                receiveRelayedSenderReport(
                    relay, layer: layer, ntp: ntp, rtpTimestamp: rtpTimestamp, from: channel.slot, now: now)
            case .layerBitrates(let relay, let rates):
                receiveRelayedLayerBitrates(relay, rates, from: channel.slot, now: now)
            case .feedback(let feedback):
                receiveRelayFeedback(feedback, from: channel.slot, now: now, output: output)
            case .media:
                counters.dropped.malformed &+= 1
            }
        } catch {
            counters.dropped.malformed &+= 1
        }
    }

    /// The channel of a relay transport, if `id` is one: one integer-keyed
    /// lookup per packet.
    func nodeRelayChannel(of id: TransportID) -> NodeRelayChannel? { nodeRelayChannels[id] }

    /// A relay transport's event; true when `id` is one.
    func handleNodeRelayEvent(_ id: TransportID, _ event: PeerTransportEvent) -> Bool {
        guard let node = nodeRelayChannels[id]?.node else { return false }
        switch event {
        case .connected:
            nodeRelays[node]?.connected = true
        case .failed, .closed:
            // Reopened at the next `setNodeRelays`.
            transports.remove(id)
            nodeRelayChannels[id] = nil
            if nodeRelays[node]?.transport == id {
                nodeRelays[node]?.transport = nil
                nodeRelays[node]?.connected = false
            }
        default: break
        }
        return true
    }
}

/// What crossed one node relay, both ways, since it was first opened
/// (media packets and their bytes before SRTP, control packets).
package struct NodeRelayTraffic: Equatable, Sendable {
    package var mediaPacketsOut: UInt64 = 0
    package var mediaBytesOut: UInt64 = 0
    package var mediaPacketsIn: UInt64 = 0
    package var mediaBytesIn: UInt64 = 0
    package var controlPacketsOut: UInt64 = 0
    package var controlPacketsIn: UInt64 = 0
    package init() {}
}

/// One node relay as the router's relay link to that node, both ways:
/// `RelayMessage`s framed by `NodeRelayFraming` and protected by the
/// relay transport's SRTP. Per packet: one frame written into a kept
/// buffer, then the transport engine copies it into a transmit slot and
/// protects it there (two copies; the ring between workers makes one).
/// No allocation, no lock: the router's thread only.
final class NodeRelayChannel: RelaySourceLink, RelayFeedbackLink {
    unowned let engine: TransportEngine
    /// The worker's output, set with every `setNodeRelays`.
    var output: any DatagramOutput
    /// The open transport (nil between a failure and its reopening: sends
    /// fail and are counted as relay drops).
    var transport: TransportID?
    /// This direction's SSRC and sequence numbers: one RTP stream for all
    /// the media this side relays, so SRTP's replay window applies.
    let ssrc = UInt32.random(in: 1...UInt32.max)
    var traffic = NodeRelayTraffic()
    private var sequenceNumber = UInt16.random(in: 0...UInt16.max)
    private let buffer: UnsafeMutableRawBufferPointer

    /// The peer node, and its relay slot in this router.
    let node: String
    let slot: Int

    init(node: String, slot: Int, engine: TransportEngine, output: any DatagramOutput) {
        self.node = node
        self.slot = slot
        self.engine = engine
        self.output = output
        buffer = .allocate(byteCount: 2048, alignment: 8)
    }

    deinit { buffer.deallocate() }

    func sendMedia(_ track: RelayTrackID, layer: Int, isRetransmission: Bool, packet: UnsafeRawBufferPointer) -> Bool {
        guard let transport,
            let n = NodeRelayFraming.encodeMedia(
                track, layer: layer, isRetransmission: isRetransmission, packet: packet, sequenceNumber: sequenceNumber,
                ssrc: ssrc, into: buffer)
        else { return false }
        sequenceNumber &+= 1
        guard engine.sendRTP(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), to: transport, output: output) else {
            return false
        }
        traffic.mediaPacketsOut &+= 1
        traffic.mediaBytesOut &+= UInt64(n)
        return true
    }

    func sendSenderReport(_ track: RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32) -> Bool {
        guard transport != nil,
            let n = NodeRelayFraming.encodeSenderReport(
                track, layer: layer, ntp: ntp, rtpTimestamp: rtpTimestamp, ssrc: ssrc, into: buffer)
        else { return false }
        return sendControl(n)
    }

    func sendLayerBitrates(_ track: RelayTrackID, _ rates: RelayedLayerBitrates) -> Bool {
        guard transport != nil, let n = NodeRelayFraming.encodeLayerBitrates(track, rates, ssrc: ssrc, into: buffer)
        else { return false }
        return sendControl(n)
    }

    func sendFeedback(_ feedback: RelayFeedback) -> Bool {
        guard transport != nil, let n = NodeRelayFraming.encodeFeedback(feedback, ssrc: ssrc, into: buffer) else {
            return false
        }
        return sendControl(n)
    }

    private func sendControl(_ n: Int) -> Bool {
        guard let transport,
            engine.sendRTP(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), to: transport, rtcp: true, output: output)
        else { return false }
        traffic.controlPacketsOut &+= 1
        return true
    }
}
