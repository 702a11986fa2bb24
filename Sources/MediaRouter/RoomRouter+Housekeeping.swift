import Forwarding
import RTCP
import RoomProtocol
import Rooms
import Wire

// Periodic work that is not driven by a packet: layer bitrates, active
// speakers. Control plane: it may allocate (a few small arrays per round).

extension RoomRouter {
    /// How often the periodic rounds run while the worker has tracks.
    static let housekeepingInterval: Duration = .milliseconds(50)
    /// Active speakers are recomputed this often (the selector announces at
    /// most every 333 ms).
    static let speakerInterval: Duration = .milliseconds(200)

    func housekeeping(now: Instant, output: any DatagramOutput) {
        guard !tracks.isEmpty else {
            nextHousekeeping = nil
            return
        }
        nextHousekeeping = now + Self.housekeepingInterval
        for track in tracks.values where track.bitrates.poll(now: now) && track.isSimulcast {
            relayLayerBitrates(of: track, now: now)
        }
        sendTransportFeedback(now: now, output: output)
        tickForwarders(now: now, output: output)
        allocateBandwidth(now: now, output: output)
        sendProbes(now: now, output: output)
        if now >= nextSpeakerRound {
            nextSpeakerRound = now + Self.speakerInterval
            updateActiveSpeakers(now: now)
        }
    }

    /// Transport-cc feedback to every publisher transport that has new
    /// arrivals (every 50 ms; `TransportWideArrivals`).
    private func sendTransportFeedback(now: Instant, output: any DatagramOutput) {
        for (id, routes) in routesByTransport {
            guard let media = routes.byMID.values.lazy.compactMap({ $0.layers.first?.ssrc }).first else { continue }
            // Written into the recorder's kept storage: no allocation.
            routes.arrivals.writeFeedback(mediaSSRC: media, now: now) { bytes in
                if sendRTCP(bytes, to: id, output: output) { counters.transportFeedbackSent &+= 1 }
            }
        }
    }

    /// Lets every video subscription notice a silent layer even when no
    /// other layer's packet arrives (`SimulcastForwarder.tick`).
    private func tickForwarders(now: Instant, output: any DatagramOutput) {
        for track in tracks.values where track.isVideo {
            for s in track.subscriptions {
                let layers = track.layers
                if let k = s.simulcast?.tick(
                    now: now, lastArrival: { i in layers.indices.contains(i) ? layers[i].lastArrival : nil })
                {
                    requestKeyframe(.pli, of: track, layer: k, now: now, output: output)
                }
                if let f = s.simulcast, f.switchesCompleted > s.switchesCounted {
                    counters.layerSwitches &+= UInt64(f.switchesCompleted - s.switchesCounted)
                    s.switchesCounted = f.switchesCompleted
                    if let latency = f.lastSwitchLatency { counters.layerSwitchLatency.record(latency) }
                }
            }
        }
    }

    /// Schedules the rounds once the first track arrives.
    func scheduleHousekeeping(now: Instant) {
        if nextHousekeeping == nil { nextHousekeeping = now + Self.housekeepingInterval }
    }

    /// One window of every published audio track, per room; a room whose
    /// speakers changed hears about it (`MediaEvent.activeSpeakers`).
    private func updateActiveSpeakers(now: Instant) {
        for room in speakerSelectors.values { room.selector.beginWindow() }
        for track in tracks.values where track.description.kind == .audio {
            let a = track.audioLevels.take()
            let room: RoomSpeakers
            if let r = speakerSelectors[track.key.room] {
                room = r
            } else {
                room = RoomSpeakers()
                speakerSelectors[track.key.room] = room
            }
            room.selector.record(track.publisher, a)
        }
        // A room that lost every audio track gets one last (empty) update,
        // then its state goes.
        speakerRoomsToDrop.removeAll(keepingCapacity: true)
        for (name, room) in speakerSelectors {
            let speakers = room.selector.endWindow(now: now)
            if room.selector.windowIsEmpty && room.selector.current.isEmpty { speakerRoomsToDrop.append(name) }
            guard let speakers, !silentSpeakerRooms.contains(name) else { continue }
            let levels = speakers.map {
                SpeakerLevel(participantId: $0.participant, level: ($0.level * 1000).rounded() / 1000)
            }
            onMediaEvent?(.activeSpeakers(room: name, speakers: levels))
        }
        for name in speakerRoomsToDrop { speakerSelectors[name] = nil }
    }
}
