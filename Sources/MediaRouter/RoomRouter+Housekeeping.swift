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
        for track in tracks.values { track.bitrates.poll(now: now) }
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
    /// arrivals (every 50 ms; `TransportFeedbackRecorder`).
    private func sendTransportFeedback(now: Instant, output: any DatagramOutput) {
        for (id, routes) in routesByTransport {
            guard let media = routes.byMID.values.lazy.compactMap({ $0.layers.first?.ssrc }).first else { continue }
            // Written into the recorder's kept storage: no allocation.
            routes.feedback.writeFeedback(mediaSSRC: media, now: now) { bytes in
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
        var byRoom: [String: [ParticipantID: AudioActivity]] = [:]
        for track in tracks.values where track.description.kind == .audio {
            let a = track.audioLevels.take()
            // A participant with several audio tracks counts by its loudest.
            let old = byRoom[track.key.room]?[track.publisher]
            if old.map({ $0.level < a.level || $0.speechFraction < a.speechFraction }) ?? true {
                byRoom[track.key.room, default: [:]][track.publisher] = a
            }
        }
        // Rooms that had speakers and lost every audio track get one last
        // (empty) update.
        for room in speakerSelectors.keys where byRoom[room] == nil { byRoom[room] = [:] }
        for (room, activities) in byRoom {
            var selector = speakerSelectors[room] ?? ActiveSpeakerSelector<ParticipantID>()
            let speakers = selector.update(activities.map { (key: $0.key, activity: $0.value) }, now: now)
            speakerSelectors[room] = activities.isEmpty && selector.current.isEmpty ? nil : selector
            guard let speakers, !silentSpeakerRooms.contains(room) else { continue }
            let levels = speakers.map { SpeakerLevel(participantId: $0.key, level: ($0.level * 1000).rounded() / 1000) }
            onMediaEvent?(.activeSpeakers(room: room, speakers: levels))
        }
    }
}
