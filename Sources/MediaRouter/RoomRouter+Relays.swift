import Forwarding
import Negotiation
import RTP
import RoomProtocol
import Rooms
import Wire
import WorkerRelay

/// One relay of one track between two workers, as one side names it: the
/// other worker's index and the plane's `RelayTrackID`.
struct RelayKey: Hashable {
    var worker: Int
    var relay: RelayTrackID
}

/// Source side: one far worker that gets a track's packets.
struct RelaySink {
    let key: RelayKey
    let link: any RelaySourceLink
    /// The layers the far worker's subscribers last said they need (bit
    /// i: layer i; `IncomingTrack.subscriptionDemand`); nil until it says.
    /// It drives dynacast at the publisher and which layers cross.
    var demand: UInt8?

    /// Whether a packet of spatial layer `layer` crosses to this far
    /// worker: every layer until it has said what it needs (its allocator
    /// measures layers from what arrives), then the layers it needs and
    /// always the lowest (a far subscriber with nothing allocated yet
    /// starts on it, as a new local one does).
    func carries(layer: Int) -> Bool {
        guard let demand, layer > 0 else { return true }
        return layer < 8 && demand & (1 << UInt8(layer)) != 0
    }
}

// A room spanning workers (docs/ARCHITECTURE.md, "Rooms over every
// worker"): the worker with the publisher's transport is the track's
// source and sends each packet once to every far worker with subscribers
// for it; a far worker holds the track as a relayed track (the same
// recognition, history, meters and forwarding as a publisher's, fed by the
// relay) and sends feedback back. Per packet: integer-keyed lookups, no
// allocation; the links take no lock.

extension RoomRouter {
    /// Carries out one of the media plane's commands for this worker.
    /// Relay commands naming an unknown track or worker are ignored and
    /// counted (`commandsIgnored`), as rooms-layer commands are.
    package func execute(_ command: WorkerCommand, now: Instant, output: any DatagramOutput) {
        switch command {
        case .media(let c): execute(c, now: now, output: output)
        case .addRelayedTrack(let room, let publisher, let trackID, let description, let relay, let from):
            guard from != workerIndex else { return ignored() }
            addRelayedTrack(
                TrackKey(room: room, trackID: trackID), publisher: publisher, description: description,
                source: RelayKey(worker: from, relay: relay))
            scheduleHousekeeping(now: now)
        case .removeRelayedTrack(let room, let trackID):
            guard let track = tracks[TrackKey(room: room, trackID: trackID)], track.relaySource != nil else {
                return ignored()
            }
            removeTrack(track)
        case .addRelaySink(let room, let trackID, let relay, let to):
            guard let track = tracks[TrackKey(room: room, trackID: trackID)], to != workerIndex,
                relaySourceLinks.indices.contains(to), let link = relaySourceLinks[to]
            else { return ignored() }
            // A track that came from a node never goes to another node, and
            // a track never crosses two rings of one node (docs/CLUSTER.md,
            // "Relays between nodes"): a track relayed from a worker may go
            // on only to a node (the node relays live on one worker), one
            // relayed from a node only to a worker. Each packet crosses
            // each node relay at most once and a loop cannot form.
            if let source = track.relaySource, isNodeRelaySlot(source.worker) == isNodeRelaySlot(to) {
                return ignored()
            }
            removeRelaySinks(of: track, to: to)
            let sink = RelaySink(key: RelayKey(worker: to, relay: relay), link: link)
            if let old = relaySinkTracks[sink.key], old !== track { removeRelaySinks(of: old, to: to) }
            track.relaySinks.append(sink)
            relaySinkTracks[sink.key] = track
        case .removeRelaySink(let room, let trackID, let to):
            guard let track = tracks[TrackKey(room: room, trackID: trackID)],
                track.relaySinks.contains(where: { $0.key.worker == to })
            else { return ignored() }
            removeRelaySinks(of: track, to: to)
        case .addRecorderSink(let room, let trackID, let relay):
            guard let track = tracks[TrackKey(room: room, trackID: trackID)], let link = recorderLink else {
                return ignored()
            }
            removeRelaySinks(of: track, to: Self.recorderSlot)
            // The recorder wants the top layer, so every layer stays on at
            // the publisher (dynacast counts this demand) and crosses.
            var sink = RelaySink(key: RelayKey(worker: Self.recorderSlot, relay: relay), link: link)
            sink.demand = 0xFF
            track.relaySinks.append(sink)
            relaySinkTracks[sink.key] = track
            // The last Sender Report of each layer at once: the recorder
            // times nothing without one, and the next may be seconds away.
            for (layer, state) in track.layers.enumerated() {
                if let sr = state.senderReport,
                    !link.sendSenderReport(relay, layer: layer, ntp: sr.ntp, rtpTimestamp: sr.rtpTimestamp)
                {
                    counters.relayDrops &+= 1
                }
            }
        case .removeRecorderSink(let room, let trackID):
            guard let track = tracks[TrackKey(room: room, trackID: trackID)] else { return ignored() }
            removeRelaySinks(of: track, to: Self.recorderSlot)
        case .setSpeakerReporter(let room, let reports):
            if reports { silentSpeakerRooms.remove(room) } else { silentSpeakerRooms.insert(room) }
        }
    }

    /// The slot a recorder sink's `RelayKey` and the recorder's feedback
    /// name: no worker or node relay has a negative index.
    package static let recorderSlot = -1

    /// The ring to the server's recorder thread (docs/RECORDING.md), once,
    /// before any `addRecorderSink`.
    package func connectRecorder(_ link: any RelaySourceLink) {
        recorderLink = link
    }

    /// Once, before any relay command: the links to every other worker
    /// (index: the far worker's; nil at our own). `sources[w]` carries our
    /// tracks' packets to worker `w`, `feedback[w]` our feedback about
    /// tracks whose source is worker `w`.
    package func connectRelays(sources: [(any RelaySourceLink)?], feedback: [(any RelayFeedbackLink)?]) {
        relaySourceLinks = sources
        relayFeedbackLinks = feedback
    }

    /// Far side: a packet of `relay` from worker `from` (the publisher's
    /// packet as the source received it, RTX already restored), valid only
    /// during the call. It goes the way a publisher's packet does after
    /// SRTP and RTX: recognition, history, meters, this worker's
    /// subscribers.
    package func receiveRelayedMedia(
        _ relay: RelayTrackID, layer: Int, isRetransmission: Bool, packet: UnsafeRawBufferPointer, from: Int, now: Instant,
        output: any DatagramOutput
    ) {
        counters.relayPacketsIn &+= 1
        guard let track = relayedTracks[RelayKey(worker: from, relay: relay)] else {
            return counters.dropped.unknownRelay &+= 1
        }
        guard track.layers.indices.contains(layer) else { return counters.dropped.unknownLayer &+= 1 }
        let header: RTPHeader
        do { header = try RTPHeader(parsing: RawSpan(_unsafeBytes: packet)) } catch { return counters.dropped.malformed &+= 1 }
        handleMedia(
            packet, header: header, track: track, layer: layer, isRetransmission: isRetransmission, now: now, output: output)
    }

    /// Far side: the publisher's last Sender Report of a layer, as the
    /// source received it (RFC 3550 section 6.4.1): what the forwarders
    /// re-base timestamps with across layer switches.
    package func receiveRelayedSenderReport(
        _ relay: RelayTrackID, layer: Int, ntp: UInt64, rtpTimestamp: UInt32, from: Int, now: Instant
    ) {
        guard let track = relayedTracks[RelayKey(worker: from, relay: relay)], track.layers.indices.contains(layer) else {
            return counters.dropped.unknownRelay &+= 1
        }
        track.layers[layer].senderReport = (ntp, rtpTimestamp)
        // A relayed track relayed on (a node's track to this node's other
        // workers, a worker's track to another node) passes it on.
        relaySenderReport(of: track, layer: layer, ntp: ntp, rtpTimestamp: rtpTimestamp)
        // The forwarders key a report by the layer's SSRC, known from its
        // packets; a report before any packet waits for the next one.
        guard let ssrc = track.layers[layer].ssrc else { return }
        for s in track.subscriptions {
            s.simulcast?.senderReport(spatialLayer: layer, ssrc: ssrc, ntp: ntp, rtpTimestamp: rtpTimestamp)
        }
    }

    /// Far side: the source's measure of every layer of `relay` (about once
    /// a second), which prices the layers this worker's relay does not
    /// carry (`IncomingTrack.allocationRates`).
    package func receiveRelayedLayerBitrates(_ relay: RelayTrackID, _ rates: RelayedLayerBitrates, from: Int, now: Instant) {
        guard let track = relayedTracks[RelayKey(worker: from, relay: relay)] else {
            return counters.dropped.unknownRelay &+= 1
        }
        track.reportedBitrates = (rates, now)
        counters.relayLayerBitratesReceived &+= 1
    }

    /// Source side: feedback from worker `from` about a track relayed to it.
    package func receiveRelayFeedback(_ feedback: RelayFeedback, from: Int, now: Instant, output: any DatagramOutput) {
        counters.relayFeedbackReceived &+= 1
        let relay: RelayTrackID
        switch feedback {
        case .keyframeRequest(let r, _), .nack(let r, _, _, _), .layerDemand(let r, _): relay = r
        }
        let key = RelayKey(worker: from, relay: relay)
        guard let track = relaySinkTracks[key] else { return counters.dropped.unknownRelay &+= 1 }
        switch feedback {
        case .keyframeRequest(_, let layer):
            // Through this worker's own per-layer throttle: the publisher
            // sees one request per window however many workers ask.
            requestKeyframe(.pli, of: track, layer: layer, now: now, output: output)
        case .nack(_, let layer, let packetID, let lostBitmask):
            guard let link = track.relaySinks.first(where: { $0.key == key })?.link else {
                return counters.retransmissionsUnavailable &+= 1
            }
            guard track.layers.indices.contains(layer), let ssrc = track.layers[layer].ssrc else {
                // A relayed track that has received nothing of the layer
                // yet asks its own source for the whole entry.
                guard let source = track.relaySource, track.layers.indices.contains(layer) else {
                    return counters.retransmissionsUnavailable &+= 1
                }
                if sendFeedback(
                    .nack(source.relay, layer: layer, packetID: packetID, lostBitmask: lostBitmask), to: source.worker)
                {
                    counters.relayNACKsSent &+= 1
                }
                return
            }
            // A relayed track (a chain: node relay and ring) asks its own
            // source for what its buffer lacks, hop by hop, batched as the
            // far subscribers' NACKs are (`retransmit`).
            var upstream = RelayNACKBatch()
            defer { if let source = track.relaySource { flushRelayNACK(&upstream, of: track, from: source) } }
            // The PID and its bitmask of the 16 following (RFC 4585
            // section 6.2.1): at most 17 lookups per entry.
            for bit in -1..<16 where bit < 0 || lostBitmask & (1 << UInt16(bit)) != 0 {
                let n = packetID &+ UInt16(bit + 1)
                let sent = track.retransmissions.withPacket(ssrc: ssrc, sequenceNumber: n, now: now) { packet in
                    link.sendMedia(relay, layer: layer, isRetransmission: true, packet: packet)
                }
                switch sent {
                case true?:
                    counters.relayPacketsOut &+= 1
                    counters.relayRetransmissionsSent &+= 1
                case false?: counters.relayDrops &+= 1
                case nil:
                    if let source = track.relaySource {
                        nackUpstream(&upstream, layer: layer, sequenceNumber: n, of: track, from: source, now: now)
                    } else {
                        counters.retransmissionsUnavailable &+= 1
                    }
                }
            }
        case .layerDemand(_, let layers):
            guard let i = track.relaySinks.firstIndex(where: { $0.key == key }) else { return }
            track.relaySinks[i].demand = layers
            counters.relayLayerDemands &+= 1
        }
    }

    // MARK: Source side

    /// Each far side of a simulcast track hears what every layer costs
    /// when this worker's meter closes a window (once a second), so its
    /// allocator can take a layer its relay does not carry yet. A full
    /// link drops the report; the next one comes a second later.
    func relayLayerBitrates(of track: IncomingTrack, now: Instant) {
        guard !track.relaySinks.isEmpty else { return }
        let rates = track.bitratesToRelay(now: now)
        for sink in track.relaySinks {
            if sink.link.sendLayerBitrates(sink.key.relay, rates) {
                counters.relayLayerBitratesSent &+= 1
            } else {
                counters.relayDrops &+= 1
            }
        }
    }

    /// Each packet once to each far worker (`relaySinks`) that needs its
    /// layer: a relay carries the layers its far side wants, once for all
    /// of that side's subscribers.
    func relay(_ packet: UnsafeRawBufferPointer, of track: IncomingTrack, layer: Int, isRetransmission: Bool) {
        for sink in track.relaySinks {
            guard sink.carries(layer: layer) else {
                counters.relayPacketsNotWanted &+= 1
                continue
            }
            if sink.link.sendMedia(sink.key.relay, layer: layer, isRetransmission: isRetransmission, packet: packet) {
                counters.relayPacketsOut &+= 1
            } else {
                counters.relayDrops &+= 1
            }
        }
    }

    /// The publisher's Sender Report of a layer, to each far worker.
    func relaySenderReport(of track: IncomingTrack, layer: Int, ntp: UInt64, rtpTimestamp: UInt32) {
        for sink in track.relaySinks
        where !sink.link.sendSenderReport(sink.key.relay, layer: layer, ntp: ntp, rtpTimestamp: rtpTimestamp) {
            counters.relayDrops &+= 1
        }
    }

    private func removeRelaySinks(of track: IncomingTrack, to worker: Int) {
        for sink in track.relaySinks where sink.key.worker == worker && relaySinkTracks[sink.key] === track {
            relaySinkTracks[sink.key] = nil
        }
        track.relaySinks.removeAll { $0.key.worker == worker }
    }

    // MARK: Far side

    private func addRelayedTrack(
        _ key: TrackKey, publisher: ParticipantID, description: PublishedTrackDescription, source: RelayKey
    ) {
        if let old = tracks[key] { removeTrack(old) }
        if let old = relayedTracks[source] { removeTrack(old) }
        let track = IncomingTrack(
            key: key, publisher: publisher, description: description, senderSSRC: configuration.reporterSSRC,
            keyframeInterval: configuration.keyframeRequestInterval)
        track.relaySource = source
        tracks[key] = track
        relayedTracks[source] = track
    }

    /// A far subscriber needs a keyframe of `layer` (its PLI or FIR, a
    /// layer switch, an unrepairable gap): through the track's own
    /// throttle here, then to the source, which throttles again.
    func requestRelayedKeyframe(
        _ kind: KeyframeRequestKind, of track: IncomingTrack, layer: Int, from source: RelayKey, now: Instant
    ) {
        guard track.layers.indices.contains(layer) else { return }
        if case .suppress = track.layers[layer].keyframeRequests.request(kind, now: now) {
            return counters.keyframeRequestsSuppressed &+= 1
        }
        sendFeedback(.keyframeRequest(source.relay, layer: layer), to: source.worker)
    }

    /// A far subscriber's NACK names `sequenceNumber` of `layer`, which
    /// this worker does not hold: it joins the batch for the source, unless
    /// it was asked for within `UpstreamNACKMemory.window` (another
    /// subscriber's NACK of the same loss).
    func nackUpstream(
        _ batch: inout RelayNACKBatch, layer: Int, sequenceNumber: UInt16, of track: IncomingTrack, from source: RelayKey,
        now: Instant
    ) {
        if track.upstreamNACKs == nil { track.upstreamNACKs = UpstreamNACKMemory() }
        guard track.upstreamNACKs?.shouldAsk(layer: layer, sequenceNumber: sequenceNumber, now: now) ?? true else {
            return counters.relayNACKsSuppressed &+= 1
        }
        if let entry = batch.add(layer: layer, sequenceNumber: sequenceNumber) {
            sendFeedback(
                .nack(source.relay, layer: entry.layer, packetID: entry.packetID, lostBitmask: entry.lostBitmask),
                to: source.worker)
            counters.relayNACKsSent &+= 1
        }
    }

    func flushRelayNACK(_ batch: inout RelayNACKBatch, of track: IncomingTrack, from source: RelayKey) {
        guard let entry = batch.finish() else { return }
        sendFeedback(
            .nack(source.relay, layer: entry.layer, packetID: entry.packetID, lostBitmask: entry.lostBitmask),
            to: source.worker)
        counters.relayNACKsSent &+= 1
    }

    /// Dynacast on the far side: the source hears what this worker's
    /// subscribers need when it changes, and tells the publisher the union.
    /// A relayed track relayed on adds what its own far sides need (one
    /// that has not said yet counts as every layer: it gets every layer,
    /// as `RelaySink.carries` says), so the demand of a subscriber two
    /// hops away reaches the publisher.
    /// The same demand is sent again every `layerDemandRefresh`: one sent
    /// before the source held this relay's sink (a far node asks as soon
    /// as its first subscriber does; the source adds the sink when it
    /// reads that node's wants from Redis) or lost on a node relay would
    /// otherwise leave the publisher's layers off for good, and the far
    /// subscribers stuck on the lowest.
    static let layerDemandRefresh: Duration = .seconds(1)

    func sendLayerDemand(of track: IncomingTrack, from source: RelayKey, now: Instant) {
        var demand = track.subscriptionDemand
        if !track.relaySinks.isEmpty {
            let every: UInt8 = track.layers.count >= 8 ? 0xFF : UInt8((1 << track.layers.count) - 1)
            for sink in track.relaySinks { demand |= sink.demand ?? every }
        }
        if demand == track.sentLayerDemand, let at = track.sentLayerDemandAt, now - at < Self.layerDemandRefresh { return }
        // Sent again next round when the link was full.
        if sendFeedback(.layerDemand(source.relay, layers: demand), to: source.worker) {
            track.sentLayerDemand = demand
            track.sentLayerDemandAt = now
        }
    }

    @discardableResult
    func sendFeedback(_ feedback: RelayFeedback, to worker: Int) -> Bool {
        guard relayFeedbackLinks.indices.contains(worker), let link = relayFeedbackLinks[worker] else {
            counters.relayDrops &+= 1
            return false
        }
        guard link.sendFeedback(feedback) else {
            counters.relayDrops &+= 1
            return false
        }
        counters.relayFeedbackSent &+= 1
        return true
    }

    /// The source packet an outgoing number that was never forwarded
    /// stands for: the rewriter keeps a source gap (a packet lost before
    /// this worker) as a gap of the same size in the outgoing numbers, so
    /// the last forwarded packet before it gives the mapping. Nil when none
    /// of the 16 numbers before was forwarded. A wrong guess costs one
    /// resend the forwarder drops as a duplicate.
    static func unforwardedSource(of n: UInt16, in history: ForwardedPacketHistory) -> (SSRC, UInt16)? {
        for d in UInt16(1)...16 {
            if let e = history.lookup(outgoingSequenceNumber: n &- d) { return (e.sourceSSRC, e.sourceSequenceNumber &+ d) }
        }
        return nil
    }
}

/// Far side: the numbers of one NACK walk that go upstream, grouped into
/// generic NACK entries (a packet id and the 16 that follow; RFC 4585
/// section 6.2.1) per layer. A value on the stack: no allocation.
struct RelayNACKBatch {
    private var pending: (layer: Int, packetID: UInt16, lostBitmask: UInt16)?

    /// Adds a number; returns the entry it closed, if any.
    mutating func add(layer: Int, sequenceNumber n: UInt16) -> (layer: Int, packetID: UInt16, lostBitmask: UInt16)? {
        if let p = pending, p.layer == layer {
            let d = n &- p.packetID
            if d == 0 { return nil }
            if d <= 16 {
                pending?.lostBitmask |= 1 << (d - 1)
                return nil
            }
        }
        let closed = pending
        pending = (layer, n, 0)
        return closed
    }

    mutating func finish() -> (layer: Int, packetID: UInt16, lostBitmask: UInt16)? {
        defer { pending = nil }
        return pending
    }
}
