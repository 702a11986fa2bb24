import BandwidthEstimation
import Forwarding
import LossRecovery
import PeerSession
import RTP
import RoomProtocol
import Rooms
import SRTP
import Wire

// Sharing each subscriber's bandwidth estimate over its tracks, and
// telling subscribers (stream-state) and publishers (dynacast) what
// follows from it. Control plane: runs every 200 ms per subscriber (or at
// once when something changed); in steady state it allocates nothing (its
// storage is kept in `AllocationScratch` and each link's
// `roundSubscriptions`), since at hundreds of subscribers these rounds were
// most of the server's heap allocations (issue #14).

/// The storage an allocation round reuses.
struct AllocationScratch {
    var candidates: [AllocatableTrack] = []
    /// Parallel to `candidates`.
    var pairs: [(Subscription, IncomingTrack)] = []
    var workspace = BandwidthAllocator.Workspace()
}

extension RoomRouter {
    /// One allocation round for every subscriber link that is due.
    func allocateBandwidth(now: Instant, output: any DatagramOutput) {
        // Each due link's subscriptions, gathered into the link's own list
        // (kept between rounds): no dictionary of arrays per round.
        for s in subscriptions.values {
            guard let id = s.transportID, let link = links[id], link.allocationDue(now: now) else { continue }
            link.roundSubscriptions.append(s)
        }
        for link in links.values where !link.roundSubscriptions.isEmpty {
            link.allocationNeeded = false
            link.lastAllocation = now
            allocate(link.roundSubscriptions, on: link, now: now)
            link.roundSubscriptions.removeAll(keepingCapacity: true)
        }
        updatePublisherLayers(now: now)
        announceStreamStates()
    }

    /// Tells each subscriber whose forwarded layer changed, or that was
    /// paused or resumed, since it was last told (`stream-state`). The
    /// layer is what is forwarded now (after the switch), not the target.
    private func announceStreamStates() {
        for s in subscriptions.values {
            guard let track = tracks[s.key.track], s.hasAllocation || s.isPaused else { continue }
            let paused = s.isPaused || (s.allocated == nil)
            let layer: Int? = paused ? nil : (track.isVideo ? s.simulcast?.currentLayer?.spatial : 0)
            // A video that has not started yet (waiting for its first
            // keyframe) has nothing to announce.
            if !paused, layer == nil { continue }
            if let last = s.announced, last.paused == paused, last.layer == layer { continue }
            // The first announcement of a flowing single-layer track says
            // nothing new.
            if s.announced == nil, !paused, !track.isSimulcast {
                s.announced = (paused, layer)
                continue
            }
            s.announced = (paused, layer)
            onMediaEvent?(
                .streamState(
                    room: track.key.room, subscriber: s.key.subscriber, trackID: track.key.trackID,
                    state: paused ? .paused : .active, layer: layer,
                    reason: s.isPaused ? .preference : s.allocationReason))
        }
    }

    private func allocate(_ subs: [Subscription], on link: SubscriberLink, now: Instant) {
        allocationScratch.candidates.removeAll(keepingCapacity: true)
        allocationScratch.pairs.removeAll(keepingCapacity: true)
        for (i, s) in subs.enumerated() {
            guard let track = tracks[s.key.track] else { continue }
            if s.isPaused {
                s.setAllocation(nil, reason: .preference, now: now)
                continue
            }
            let layers =
                track.isVideo
                ? track.allocationRates(now: now)
                : LayerRates(single: track.bitrates.bitrate(spatial: 0, upToTemporal: LayerBitrateMeter.temporalLayers - 1))
            // Priority: the room's active speakers' videos go first (their
            // tiles are the large ones in a speaker layout); on-screen size
            // reaches the allocator as the preference's maxWidth.
            let speaking = speakerSelectors[track.key.room]?.selector.current.contains(track.publisher) ?? false
            allocationScratch.candidates.append(
                AllocatableTrack(
                    id: i, kind: track.isVideo ? .video : .audio, priority: speaking ? 1 : 0,
                    maxSpatialLayer: s.maxSpatialLayer(of: track), layers: layers, current: s.allocated))
            allocationScratch.pairs.append((s, track))
        }
        link.allocator.allocate(
            estimate: link.estimator.estimate, tracks: allocationScratch.candidates, into: &allocationScratch.workspace)
        // Decisions come in the order of the candidates.
        for (k, decision) in allocationScratch.workspace.decisions.enumerated() {
            let (s, track) = allocationScratch.pairs[k]
            // Audio is allocated first and never paused for bandwidth: a
            // few dozen kbit/s, and what a call cannot do without.
            if !track.isVideo {
                s.setAllocation(MediaLayer(spatial: 0, temporal: 0), reason: .bandwidth, now: now)
                continue
            }
            switch decision.allocation {
            case .forward(let layer, _):
                s.setAllocation(layer, reason: .bandwidth, now: now)
            case .paused:
                s.setAllocation(nil, reason: .bandwidth, now: now)
            case .unavailable:
                // Nothing measured yet (the first second of a track), or no
                // layer within the preference is being sent: forward the
                // best live layer the preference allows, without a budget.
                let live = track.highestLiveLayer(now: now, silence: .milliseconds(300)) ?? 0
                let cap = s.maxSpatialLayer(of: track) ?? Int.max
                s.setAllocation(
                    MediaLayer(spatial: min(live, cap), temporal: MediaLayer.allTemporalLayers), reason: .publisher,
                    now: now)
            }
        }
        if let probe = allocationScratch.workspace.probe {
            let target = Bitrate(bitsPerSecond: link.estimator.estimate.bitsPerSecond &+ probe.bitsPerSecond)
            link.probes.request(target: target, estimate: link.estimator.estimate, usage: link.estimator.usage, now: now)
        }
    }

    /// Dynacast: a simulcast layer no subscriber is allocated is turned off
    /// at the publisher (`publisher-layers`), and back on when one is. A
    /// track nobody subscribes to keeps only its lowest layer, so a new
    /// subscriber starts at once.
    private func updatePublisherLayers(now: Instant) {
        for track in tracks.values where track.isSimulcast {
            // A relayed track tells its source what its subscribers need
            // instead (the source has the publisher).
            if let source = track.relaySource {
                sendLayerDemand(of: track, from: source, now: now)
                continue
            }
            // A bit per layer, the lowest always on: compared every round
            // without building anything (it is rarely different).
            var wanted = track.subscriptionDemand | 1
            // Each far worker's last demand (their subscribers' needs).
            for sink in track.relaySinks { wanted |= sink.demand ?? 0 }
            wanted &= track.layers.count >= 8 ? 0xFF : UInt8((1 << track.layers.count) - 1)
            guard wanted != track.announcedLayerMask else { continue }
            track.announcedLayerMask = wanted
            let layers = track.layers.indices.compactMap { i in
                track.layers[i].rid.map { LayerActivity(rid: $0.description, active: wanted & (1 << i) != 0) }
            }
            guard !layers.isEmpty else { continue }
            onMediaEvent?(
                .publisherLayers(room: track.key.room, publisher: track.publisher, trackID: track.key.trackID, layers: layers))
        }
    }
}

extension RoomRouter {
    /// Sends the padding a running probe cluster asks for (`ProbeController`),
    /// as padding-only packets on an RTX stream of the subscriber (how
    /// libwebrtc probes: receivers drop them after counting them in
    /// transport-cc feedback). A subscriber without RTX is not probed.
    func sendProbes(now: Instant, output: any DatagramOutput) {
        for (id, link) in links {
            guard let probe = link.probes.poll(now: now), probe.bytes > 0 else { continue }
            guard let s = subscriptions.values.first(where: { $0.transportID == id && $0.rtxSSRC != nil }),
                let sink = s.sink, let rtxSSRC = s.rtxSSRC, let rtxPayloadType = s.rtxPayloadType
            else { continue }
            var remaining = probe.bytes
            while remaining > 0 {
                let padding = min(remaining, RTXPacket.paddingRange.upperBound)
                remaining -= padding
                let sequence = s.rtxSequenceNumber
                let sent = transmitToSubscriber(
                    on: sink, kind: .probe, extraRoom: RTPHeader.fixedHeaderLength + padding, now: now, output: output
                ) { slot, egress in
                    guard
                        let length = RTXPacket.makePadding(
                            in: slot, rtxSSRC: rtxSSRC, sequenceNumber: sequence, payloadType: rtxPayloadType, timestamp: 0,
                            paddingBytes: padding),
                        let header = try? RTPHeader(
                            parsing: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: slot[0..<length])))
                    else { return nil }
                    return egress.write(into: slot, length: length, header: header)
                }
                // Moves on even after a failed send: see `send`.
                s.rtxSequenceNumber &+= 1
                guard let sent, sent > 0 else { break }
                counters.probeBytesSent &+= UInt64(padding)
            }
        }
    }
}
