import MediaRouter
import Synchronization
import WorkerRelay

/// The rings from each media worker to the server's recorder thread
/// (docs/RECORDING.md): worker `w` writes the packets and Sender Reports
/// of the tracks being recorded whose source it is into `links[w]`, a
/// bounded single-producer single-consumer `PacketRing` allocated once;
/// the recorder thread alone drains them. A full ring drops and counts
/// (`RelayLinkCounters.droppedFull`): a slow disk never stalls a worker.
package final class RecorderRings: Sendable {
    package let links: [RingRelaySourceLink]

    /// 1,024 slots: about four seconds of a 2.5 Mbit/s camera, far more
    /// than the recorder's 10 ms between drains.
    package static let slots = 1024

    init(workers: Int, packetBytes: Int = 2048) {
        let slot = RelayMessage.slotSize(forPacketsUpTo: packetBytes)
        links = (0..<workers).map { _ in RingRelaySourceLink(ring: PacketRing(capacity: Self.slots, slotSize: slot)) }
    }

    /// Messages dropped on full rings, all workers.
    package var droppedFull: UInt64 { links.reduce(0) { $0 &+ $1.counters.values.droppedFull } }
}

extension MediaPlane {
    /// The rings to a recorder, made and handed to every worker once (a
    /// second call returns the same rings). Each worker gets its ring
    /// through its mailbox, before any recorder command posted later.
    package func connectRecorder() -> RecorderRings {
        recorderRings.withLock { rings in
            if let rings { return rings }
            let made = RecorderRings(workers: workers.count)
            for (w, worker) in workers.enumerated() {
                let link = made.links[w]
                worker.mailbox.post { engine, _, _ in engine.router.connectRecorder(link) }
            }
            rings = made
            return made
        }
    }

    /// Sends `trackID`'s packets to the recorder as `relay`, from the
    /// track's source worker; that worker's index, or nil when the room
    /// holds no such track (yet). Posted under the planner's lock, so it
    /// reaches the worker after the track's `addIncomingTrack`.
    package func addRecorderSink(room: String, trackID: String, relay: RelayTrackID) -> Int? {
        planner.withLock { planner in
            guard let w = planner.sourceWorker(of: trackID, in: room) else { return nil }
            post(PlannedCommand(worker: w, .addRecorderSink(room: room, trackID: trackID, relay: relay)))
            return w
        }
    }

    package func removeRecorderSink(room: String, trackID: String, worker: Int) {
        guard workers.indices.contains(worker) else { return }
        post(PlannedCommand(worker: worker, .removeRecorderSink(room: room, trackID: trackID)))
    }

    /// The recorder needs a keyframe of `layer` of the track it records as
    /// `relay` from `worker`: through the worker's mailbox (a control
    /// message, seldom), into the same per-layer throttle as a far
    /// worker's request, then PLI to the publisher.
    package func requestRecorderKeyframe(relay: RelayTrackID, layer: Int, worker: Int) {
        guard workers.indices.contains(worker) else { return }
        workers[worker].mailbox.post { engine, now, transmit in
            engine.receiveRelayFeedback(
                .keyframeRequest(relay, layer: layer), from: RoomRouter.recorderSlot, now: now, transmit: transmit)
        }
    }
}
