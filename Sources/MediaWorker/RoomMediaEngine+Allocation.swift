import BandwidthEstimation
import Forwarding
import NetIO
import Rooms
import Wire

// Sharing each subscriber's bandwidth estimate over its tracks, and
// telling subscribers (stream-state) and publishers (dynacast) what
// follows from it. Control plane: runs every 200 ms per subscriber (or at
// once when something changed) and may allocate.

extension RoomMediaEngine {
    /// One allocation round for every subscriber link that is due.
    func allocateBandwidth(now: Instant, transmit: TransmitQueue) {
        var bySubscriberTransport: [TransportID: [Subscription]] = [:]
        for s in subscriptions.values {
            if let id = s.transportID { bySubscriberTransport[id, default: []].append(s) }
        }
        for (id, subs) in bySubscriberTransport {
            guard let link = links[id], link.allocationDue(now: now) else { continue }
            link.allocationNeeded = false
            link.lastAllocation = now
            allocate(subs, on: link, now: now)
        }
        updatePublisherLayers()
    }

    private func allocate(_ subs: [Subscription], on link: SubscriberLink, now: Instant) {
        var candidates: [AllocatableTrack] = []
        var byID: [Int: (Subscription, IncomingTrack)] = [:]
        for (i, s) in subs.enumerated() {
            guard let track = tracks[s.key.track] else { continue }
            if s.isPaused {
                s.setAllocation(nil, reason: .preference, engine: self)
                continue
            }
            let layers: [[Bitrate]]
            if track.isVideo {
                layers = track.bitrates.cumulativeRates
            } else {
                layers = [[track.bitrates.bitrate(spatial: 0, upToTemporal: LayerBitrateMeter.temporalLayers - 1)]]
            }
            candidates.append(
                AllocatableTrack(
                    id: i, kind: track.isVideo ? .video : .audio, priority: 0,
                    maxSpatialLayer: s.maxSpatialLayer(of: track), layers: layers, current: s.allocated))
            byID[i] = (s, track)
        }
        let allocation = link.allocator.allocate(estimate: link.estimator.estimate, tracks: candidates)
        for decision in allocation.decisions {
            guard let (s, track) = byID[decision.id] else { continue }
            switch decision.allocation {
            case .forward(let layer, _):
                s.setAllocation(layer, reason: .bandwidth, engine: self)
            case .paused:
                s.setAllocation(nil, reason: .bandwidth, engine: self)
            case .unavailable:
                // Nothing measured yet (the first second of a track), or no
                // layer within the preference is being sent: forward the
                // best live layer the preference allows, without a budget.
                let live = track.highestLiveLayer(now: now, silence: .milliseconds(300)) ?? 0
                let cap = s.maxSpatialLayer(of: track) ?? Int.max
                s.setAllocation(AllocatedLayer(spatial: min(live, cap), temporal: Int.max), reason: .publisher, engine: self)
            }
        }
        if let probe = allocation.probe {
            let target = Bitrate(bitsPerSecond: link.estimator.estimate.bitsPerSecond &+ probe.bitsPerSecond)
            link.probes.request(target: target, estimate: link.estimator.estimate, usage: link.estimator.usage, now: now)
        }
    }

    /// Dynacast: a simulcast layer no subscriber is allocated is turned off
    /// at the publisher (`publisher-layers`), and back on when one is. A
    /// track nobody subscribes to keeps only its lowest layer, so a new
    /// subscriber starts at once.
    private func updatePublisherLayers() {
        for track in tracks.values where track.isSimulcast {
            var wanted = Array(repeating: false, count: track.layers.count)
            wanted[0] = true
            for s in track.subscriptions {
                guard let layer = s.allocated else { continue }
                // One above what is allocated stays on so upgrades need no
                // round trip to the publisher.
                for i in 0...min(layer.spatial + 1, track.layers.count - 1) { wanted[i] = true }
            }
            guard wanted != track.announcedLayers else { continue }
            track.announcedLayers = wanted
            let layers = zip(track.layers, wanted).compactMap { layer, on in
                layer.rid.map { LayerActivity(rid: $0.description, active: on) }
            }
            guard !layers.isEmpty else { continue }
            onMediaEvent?(
                .publisherLayers(room: track.key.room, publisher: track.publisher, trackID: track.key.trackID, layers: layers))
        }
    }
}
