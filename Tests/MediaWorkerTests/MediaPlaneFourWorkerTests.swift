import DTLS
import Foundation
import ICE
import Negotiation
import NetIO
import RoomProtocol
import Rooms
import SFUTesting
import Testing
import Wire

@testable import MediaWorker

/// A room over four real worker threads on loopback (issue #13): a
/// publisher on worker 0 and subscribers on every worker; each subscriber
/// gets the track, and the track crosses to each far worker once per
/// packet whatever its number of subscribers there.
@Suite(.serialized) struct MediaPlaneFourWorkerTests {
    private func speech(_ n: Int) -> [UInt8] {
        RTPBuilders.packet(
            payloadType: 111, sequenceNumber: UInt16(n), timestamp: UInt32(960 * n), ssrc: 0xA0A0,
            extensions: [(1, [0x80 | 20])], payload: [0xF8, 0xFF, 0xFE])
    }

    /// `RoomWorkerHarness.open` on worker `index` of `plane`.
    private func open(
        _ client: UDPClient, _ participant: String, _ role: TransportRole, on index: Int, plane: MediaPlane,
        certificate: DTLSCertificate
    ) throws {
        let local = ICECredentials.random()
        let remote = try RoomWorkerHarness.remoteParameters(of: client)
        let id = ParticipantID(participant)
        switch role {
        case .publisher:
            plane.post(.openTransport(room: "r", worker: index, participant: id, role: role, local: local, remote: remote))
        case .subscriber:
            plane.post(.openTransport(room: "r", worker: index, participant: id, role: role, local: local, remote: nil))
            plane.post(.setRemote(room: "r", participant: id, role: role, remote: remote))
        }
        let now = MonotonicClock.now()
        client.transport.setRemoteParameters(credentials: local, fingerprints: [certificate.fingerprint(.sha256)], now: now)
        client.transport.addLocalCandidate(.host(client.local), now: now)
        client.transport.addRemoteCandidate(.host(plane.localAddresses[index].transportAddress), now: now)
    }

    @Test(.timeLimit(.minutes(1)))
    func aTrackReachesSubscribersOnEveryWorkerCrossingOncePerFarWorker() throws {
        let certificate = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let plane = try MediaPlane(count: 4, bindIP: "127.0.0.1", firstPort: 0, certificate: certificate)
        defer { plane.stop() }
        let publisher = try UDPClient(certificate: certificate)
        try open(publisher, "PA_pub", .publisher, on: 0, plane: plane, certificate: certificate)
        plane.post(
            .addIncomingTrack(
                room: "r", participant: ParticipantID("PA_pub"), trackID: "TR_a",
                description: Tracks.opusTrack(ssrc: 0xA0A0, audioLevelID: 1)))
        // Two subscribers on worker 2: the track still crosses to it once.
        let placement = [0, 1, 2, 2, 3]
        var subscribers: [UDPClient] = []
        for (i, w) in placement.enumerated() {
            let s = try UDPClient(certificate: certificate)
            try open(s, "PA_s\(i)", .subscriber, on: w, plane: plane, certificate: certificate)
            plane.post(
                .forward(
                    room: "r", trackID: "TR_a", subscriber: ParticipantID("PA_s\(i)"),
                    outgoing: Tracks.outgoing(
                        .opus(payloadType: Tracks.opus), kind: .audio, ssrc: 0x5500 + UInt32(i), trackID: "TR_a")))
            subscribers.append(s)
        }
        let everyone = [publisher] + subscribers
        try UDPClient.pump(everyone, for: .seconds(10)) { everyone.allSatisfy(\.isConnected) }
        let connected = everyone.allSatisfy(\.isConnected)
        #expect(connected)
        let count = 60
        for n in 0..<count {
            #expect(publisher.sendMedia(speech(n)))
            try UDPClient.pump(everyone, for: .milliseconds(5))
        }
        try UDPClient.pump(everyone, for: .seconds(3)) { subscribers.allSatisfy { $0.receivedRTP.count >= count - 3 } }
        for (i, s) in subscribers.enumerated() {
            #expect(
                s.receivedRTP.count >= count - 3, "subscriber \(i) on worker \(placement[i]): \(s.receivedRTP.count) of \(count)")
        }
        let relays = plane.relayCounts()
        // Three far workers (1, 2, 3), each once per packet.
        #expect(relays[0].mediaSent >= UInt64(3 * (count - 3)) && relays[0].mediaSent <= UInt64(3 * count + 30), "\(relays[0])")
        #expect(relays[2].mediaReceived <= UInt64(count + 10), "once to worker 2, not once per subscriber: \(relays[2])")
        #expect(relays.allSatisfy { $0.mediaDroppedFull == 0 && $0.malformed == 0 })
    }
}
