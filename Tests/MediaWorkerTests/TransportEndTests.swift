import DTLS
import ICE
import MediaRouter
import MediaWorker
import NetIO
import PeerSession
import RoomProtocol
import Rooms
import Testing
import Wire

/// How transports end on a real worker: failures counted by reason, and
/// the drain's close_notify to every peer.
@Suite struct TransportEndTests {
    @Test(.timeLimit(.minutes(1)))
    func countsICEAndDTLSFailuresByReason() throws {
        let bed = try RoomWorkerHarness { $0.transport.iceLite.connectTimeout = .milliseconds(300) }
        defer { bed.stop() }
        // Nobody ever sends a check: the connect timeout.
        bed.execute(
            .openTransport(
                room: "r1", worker: 0, participant: ParticipantID("PA_silent"), role: .publisher, local: .random(),
                remote: nil))
        // ICE works, but the certificate is not the one the SDP named.
        let other = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let liar = try UDPClient(certificate: bed.certificate)
        try bed.open(
            liar, room: "r1", participant: "PA_liar", role: .publisher,
            claimedFingerprints: [other.fingerprint(.sha256)])
        let end = MonotonicClock.now() + .seconds(5)
        var failures = TransportFailures()
        while MonotonicClock.now() < end {
            try liar.pump(for: .milliseconds(50))
            failures = try #require(bed.counters).failures
            if failures.iceConnectTimeout == 1, failures.dtlsFingerprintMismatch == 1 { break }
        }
        #expect(failures.iceConnectTimeout == 1)
        #expect(failures.dtlsFingerprintMismatch == 1)
        #expect(failures.iceConsentExpired == 0 && failures.dtlsHandshakeTimeout == 0)
        #expect(bed.query { $0.transports.transportCount } == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func closeAllTransportsSendsCloseNotifyToEveryPeer() throws {
        let bed = try RoomWorkerHarness()
        defer { bed.stop() }
        let publisher = try UDPClient(certificate: bed.certificate)
        let subscriber = try UDPClient(certificate: bed.certificate)
        try bed.open(publisher, room: "r1", participant: "PA_pub", role: .publisher)
        try bed.open(subscriber, room: "r1", participant: "PA_sub", role: .subscriber)
        #expect(try bed.connect([publisher, subscriber]))
        bed.worker.mailbox.post { engine, now, transmit in
            #expect(engine.closeAllTransports(now: now, transmit: transmit) == 2)
        }
        // A client transport is `closed` only on the peer's close_notify
        // (a failure would be `failed`).
        try UDPClient.pump([publisher, subscriber], for: .seconds(3)) {
            publisher.transport.state == .closed && subscriber.transport.state == .closed
        }
        #expect(publisher.transport.state == .closed)
        #expect(subscriber.transport.state == .closed)
        #expect(bed.query { $0.transports.transportCount } == 0)
    }
}
