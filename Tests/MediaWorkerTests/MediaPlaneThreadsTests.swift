import DTLS
import Foundation
import NetIO
import RoomProtocol
import Rooms
import SFUTesting
import Synchronization
import Testing
import Wire

@testable import MediaWorker

/// Holds whoever calls `hold` (at most 10 s) until `release`.
private final class Gate: Sendable {
    private let entered = Atomic<Bool>(false)
    var isEntered: Bool { entered.load(ordering: .acquiring) }
    private let opened = Atomic<Bool>(false)

    func hold() {
        entered.store(true, ordering: .releasing)
        let end = Date().addingTimeInterval(10)
        while !opened.load(ordering: .acquiring), Date() < end { Thread.sleep(forTimeInterval: 0.001) }
    }

    func release() { opened.store(true, ordering: .releasing) }
}

/// Neither side waits on the other (issue #12, defect 8): media events
/// reach the signalling side through a mailbox, and `/metrics` reads the
/// workers' published snapshots without posting to them.
@Suite(.serialized) struct MediaPlaneThreadsTests {
    private func speech(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(n), timestamp: UInt32(960 * n), ssrc: 0xA0A0,
            extensions: [(1, [0x80 | 20])], payload: [0xF8, 0xFF, 0xFE])
    }

    /// A plane with one worker, a publisher whose audio level makes it the
    /// active speaker and a subscriber of its track, both connected.
    private func speakingRoom() throws -> (MediaPlane, UDPClient, UDPClient) {
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let plane = try MediaPlane(count: 1, bindIP: "127.0.0.1", firstPort: 0, certificate: certificate)
        let worker = plane.localAddresses[0].transportAddress
        let publisher = try UDPClient(certificate: certificate)
        let subscriber = try UDPClient(certificate: certificate)
        try RoomWorkerHarness.open(
            publisher, room: "r1", participant: "PA_pub", role: .publisher, certificate: certificate, worker: worker,
            execute: plane.post)
        plane.post(
            .addIncomingTrack(
                room: "r1", participant: ParticipantID("PA_pub"), trackID: "TR_a",
                description: Tracks.opusTrack(ssrc: 0xA0A0, audioLevelID: 1)))
        try RoomWorkerHarness.open(
            subscriber, room: "r1", participant: "PA_sub", role: .subscriber, certificate: certificate, worker: worker,
            execute: plane.post)
        plane.post(
            .forward(
                room: "r1", trackID: "TR_a", subscriber: ParticipantID("PA_sub"),
                outgoing: Tracks.outgoing(.opus(payloadType: Tracks.opus), kind: .audio, ssrc: 0x5500, trackID: "TR_a")))
        try UDPClient.pump([publisher, subscriber], for: .seconds(5)) { publisher.isConnected && subscriber.isConnected }
        #expect(publisher.isConnected && subscriber.isConnected)
        return (plane, publisher, subscriber)
    }

    /// The signalling side stuck in its handler (as when another thread
    /// holds the rooms lock) used to stop the worker that called it: no
    /// packet reached any subscriber on that worker until it returned.
    @Test(.timeLimit(.minutes(1)))
    func aStuckMediaEventHandlerDoesNotStopForwarding() throws {
        let (plane, publisher, subscriber) = try speakingRoom()
        defer { plane.stop() }
        let gate = Gate()
        defer { gate.release() }
        plane.onMediaEvent { _ in gate.hold() }
        var n = 0
        let end = Date().addingTimeInterval(5)
        while !gate.isEntered, Date() < end {
            #expect(publisher.sendMedia(speech(n)))
            n += 1
            try UDPClient.pump([publisher, subscriber], for: .milliseconds(20))
        }
        #expect(gate.isEntered, "no active-speaker event within 5 s")
        // The handler is stuck now; the worker forwards on.
        let before = subscriber.receivedRTP.count
        for _ in 0..<40 {
            #expect(publisher.sendMedia(speech(n)))
            n += 1
            try UDPClient.pump([publisher, subscriber], for: .milliseconds(10))
        }
        try UDPClient.pump([publisher, subscriber], for: .seconds(1)) { subscriber.receivedRTP.count >= before + 40 }
        #expect(subscriber.receivedRTP.count - before >= 36, "\(subscriber.receivedRTP.count - before) of 40 forwarded")
    }

    /// A worker busy for a whole second (here: a control message that
    /// blocks) used to hold `snapshots` (`/metrics`) for 500 ms and then
    /// leave it out; now metrics answer at once with what it last published.
    @Test(.timeLimit(.minutes(1)))
    func metricsDoNotWaitForABusyWorker() throws {
        let (plane, publisher, subscriber) = try speakingRoom()
        defer { plane.stop() }
        for n in 0..<20 { #expect(publisher.sendMedia(speech(n))) }
        try UDPClient.pump([publisher, subscriber], for: .seconds(2)) { subscriber.receivedRTP.count >= 20 }
        // Within a snapshot interval the worker publishes what it counted.
        let published = Date().addingTimeInterval(2)
        while (plane.snapshots().first?.counters.rtpPacketsIn ?? 0) < 20, Date() < published {
            Thread.sleep(forTimeInterval: 0.005)
        }
        let gate = Gate()
        defer { gate.release() }
        plane.workers[0].mailbox.post { _, _, _ in gate.hold() }
        let entered = Date().addingTimeInterval(2)
        while !gate.isEntered, Date() < entered { Thread.sleep(forTimeInterval: 0.001) }
        let start = MonotonicClock.now()
        let snapshots = plane.snapshots()
        let took = MonotonicClock.now() - start
        #expect(took < .milliseconds(50), "\(took)")
        #expect(snapshots.count == 1)
        #expect(snapshots.first?.counters.rtpPacketsIn ?? 0 >= 20)
        #expect(snapshots.first?.transports == 2)
    }
}
