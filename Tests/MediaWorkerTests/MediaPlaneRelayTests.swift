import DTLS
import Foundation
import NetIO
import Synchronization
import Testing
import Wire
import WorkerRelay

@testable import MediaWorker

/// The rings between a plane's real worker threads (MediaPlane+Relays): a
/// message pushed on one worker's thread is drained on another's, after
/// one eventfd wake per producer turn.
@Suite(.serialized) struct MediaPlaneRelayTests {
    /// Polls `done` for up to `seconds`.
    private func waitFor(seconds: Double = 5, _ done: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if done() { return true }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return done()
    }

    @Test func ringMessagesPostedOnOneWorkerReachTheOtherWorkersEngines() throws {
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let plane = try MediaPlane(count: 4, bindIP: "127.0.0.1", firstPort: 0, certificate: certificate)
        defer { plane.stop() }
        let relays = plane.relays
        // On worker 0's thread (the SPSC producer of its rings): 100
        // packets to worker 1, 50 to worker 3, a Sender Report to 2.
        plane.workers[0].mailbox.post { _, _, _ in
            var packet = [UInt8](repeating: 0x80, count: 200)
            for i in 0..<150 {
                packet[2] = UInt8(truncatingIfNeeded: i)
                let to = i < 100 ? 1 : 3
                _ = packet.withUnsafeBytes {
                    relays.media[0][to]?.sendMedia(RelayTrackID(7), layer: 0, isRetransmission: false, packet: $0)
                }
            }
            _ = relays.media[0][2]?.sendSenderReport(RelayTrackID(7), layer: 0, ntp: 1, rtpTimestamp: 2)
        }
        // On worker 2's thread: feedback about worker 0's track.
        plane.workers[2].mailbox.post { _, _, _ in
            for _ in 0..<10 { _ = relays.feedback[2][0]?.sendFeedback(.keyframeRequest(RelayTrackID(7), layer: 0)) }
        }
        // Within half a second: an idle worker with nothing due sleeps up
        // to a second in epoll, so only the wake gets them there sooner.
        let arrived = waitFor(seconds: 0.5) {
            let c = plane.relayCounts()
            return c[1].mediaReceived == 100 && c[3].mediaReceived == 50 && c[2].mediaReceived == 1
                && c[0].feedbackReceived == 10
        }
        let counts = plane.relayCounts()
        #expect(arrived, "\(counts)")
        #expect(counts[0].mediaSent == 151 && counts[0].mediaDroppedFull == 0)
        #expect(counts[2].feedbackSent == 10)
        // One turn pushed to three workers: one wake each, not one per packet.
        #expect(counts[0].wakesSent == 3, "\(counts[0])")
        #expect(counts[2].wakesSent == 1)
        #expect(counts.allSatisfy { $0.malformed == 0 })
    }

    /// A burst larger than a ring: what does not fit is dropped and
    /// counted at once (the producer never waits), and everything pushed
    /// is drained, over several bounded turns.
    @Test func aBurstPastTheRingDropsAndCountsAndTheRestArrives() throws {
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let plane = try MediaPlane(count: 2, bindIP: "127.0.0.1", firstPort: 0, certificate: certificate)
        defer { plane.stop() }
        let relays = plane.relays
        let burst = RelayMesh.mediaSlots * 3
        plane.workers[1].mailbox.post { _, _, _ in
            let packet = [UInt8](repeating: 0x80, count: 1200)
            for _ in 0..<burst {
                _ = packet.withUnsafeBytes {
                    relays.media[1][0]?.sendMedia(RelayTrackID(1), layer: 1, isRetransmission: false, packet: $0)
                }
            }
        }
        let settled = waitFor {
            let c = plane.relayCounts()
            return c[1].mediaSent + c[1].mediaDroppedFull == UInt64(burst) && c[0].mediaReceived == c[1].mediaSent
        }
        let counts = plane.relayCounts()
        #expect(settled, "\(counts)")
        #expect(counts[1].mediaSent >= UInt64(RelayMesh.mediaSlots))
        #expect(counts[1].mediaDroppedFull > 0, "a burst of three rings' worth in one turn overflows")
    }
}
