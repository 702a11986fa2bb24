import ICE
import SFUTesting
import STUN
import Testing
import Wire

/// Full agent against lite agent over the in-memory network (10 ms each
/// way), on a virtual clock.
@Suite struct FullAgentWithLiteAgentTests {
    @Test func connectsAndBothSidesSelectTheSamePair() {
        var h = Harness()
        let t0 = h.start
        h.run(for: .seconds(1))
        // t0: check; +10 lite answers; +20 valid, nomination sent; +30 lite
        // selects; +40 full selects.
        #expect(
            h.fullEvents == [
                TimedEvent(at: t0, event: .stateChanged(.checking)),
                TimedEvent(at: ms(t0, 40), event: .selectedPairChanged(local: Addr.client, remote: Addr.server)),
                TimedEvent(at: ms(t0, 40), event: .stateChanged(.connected)),
            ])
        #expect(
            h.liteEvents == [
                TimedEvent(at: ms(t0, 10), event: .stateChanged(.checking)),
                TimedEvent(at: ms(t0, 30), event: .selectedAddressChanged(Addr.client)),
                TimedEvent(at: ms(t0, 30), event: .stateChanged(.connected)),
            ])
        #expect(h.full.selectedPair == ICEAddressPair(local: Addr.client, remote: Addr.server))
        #expect(h.lite.selectedAddress == Addr.client)
        #expect(h.violations.isEmpty)
        // Lite: consent expires 30 s after the nominated check.
        #expect(h.lite.nextDeadline == ms(t0, 30) + .seconds(30))
        // Full: the first consent check at a seeded 4 to 6 s interval.
        var jitter = ICEPseudoRandom(seed: 7)
        let interval = jitter.duration(in: .seconds(4) ... .seconds(6))
        #expect(h.full.nextDeadline == ms(t0, 40) + interval)
        #expect(interval >= .seconds(4) && interval <= .seconds(6))
        #expect(h.lite.counters.validChecks == 2)
    }

    @Test func consentKeepsTheSessionUpForMinutes() {
        var h = Harness()
        h.run(for: .seconds(180))
        #expect(h.full.state == .connected)
        #expect(h.lite.state == .connected)
        #expect(h.lite.selectedAddress == Addr.client)
        // About one consent check per 5 s: 180 s gives 30 to 45 of them.
        #expect((32...47).contains(h.lite.counters.validChecks))
        #expect(h.violations.isEmpty)
    }

    @Test func lostFirstCheckIsRetransmittedAfterTheRTO() {
        var h = Harness()
        let t0 = h.start
        h.net.blocked = [Addr.client]
        h.run(for: .milliseconds(100))
        #expect(h.net.dropped == 1)
        h.net.blocked = []
        h.run(for: .seconds(1))
        // The retransmission at t0 + 250 ms carries the same transaction.
        let first = h.net.log.first { $0.from == Addr.client }
        #expect(first?.deliverAt == ms(t0, 260))
        #expect(h.fullEvents.last == TimedEvent(at: ms(t0, 290), event: .stateChanged(.connected)))
        #expect(h.liteEvents.contains(TimedEvent(at: ms(t0, 280), event: .selectedAddressChanged(Addr.client))))
        #expect(h.violations.isEmpty)
    }

    @Test func connectsOverALossyNetwork() {
        for seed in UInt64(1)...20 {
            var h = Harness()
            h.net = InMemoryNetwork(seed: seed, lossRate: 0.3, delay: .milliseconds(20), jitter: .milliseconds(15))
            h.run(for: .seconds(20))
            #expect(h.full.state == .connected, "seed \(seed)")
            #expect(h.lite.selectedAddress == Addr.client, "seed \(seed)")
            #expect(h.violations.isEmpty, "seed \(seed)")
        }
    }

    @Test func liteSideConsentExpiresThirtySecondsAfterTheLastValidCheck() {
        var h = Harness()
        h.run(for: .seconds(10))
        h.net.blocked = [Addr.client]
        let lastCheck = h.net.log.last { $0.to == Addr.server }?.deliverAt
        h.run(for: .seconds(40))
        let expiry = try! #require(lastCheck) + .seconds(30)
        #expect(
            h.liteEvents.suffix(2) == [
                TimedEvent(at: expiry, event: .consentExpired),
                TimedEvent(at: expiry, event: .stateChanged(.failed)),
            ])
        #expect(h.lite.selectedAddress == nil)
        #expect(!h.lite.isValidatedAddress(Addr.client))
        #expect(h.lite.nextDeadline == nil)
    }

    @Test func fullSideConsentExpiresThirtySecondsAfterTheLastResponse() {
        var h = Harness()
        h.run(for: .seconds(10))
        h.net.dropRule = { _, from, _ in from == Addr.server }
        let lastResponse = h.net.log.last { $0.from == Addr.server }?.deliverAt
        h.run(for: .seconds(40))
        let expiry = try! #require(lastResponse) + .seconds(30)
        #expect(
            h.fullEvents.suffix(2) == [
                TimedEvent(at: expiry, event: .consentExpired),
                TimedEvent(at: expiry, event: .stateChanged(.failed)),
            ])
        #expect(h.full.selectedPair == nil)
        // The lite side still sees consent checks: it stays connected
        // until they stop.
        #expect(h.lite.state == .connected)
    }

    @Test func handoverMovesTheLiteSelectionOnlyAfterANominatedCheck() {
        var h = Harness()
        h.run(for: .seconds(2))
        #expect(h.lite.selectedAddress == Addr.client)
        let t1 = h.clock.now
        h.full.addLocalCandidate(.host(Addr.clientAfterHandover))
        h.full.removeLocalCandidate(Addr.client)
        h.net.blocked = [Addr.client]
        #expect(h.full.selectedPair == nil)
        // First the ordinary check from the new address: validated, not
        // selected.
        h.run(until: ms(t1, 15))
        #expect(h.lite.isValidatedAddress(Addr.clientAfterHandover))
        #expect(h.lite.selectedAddress == Addr.client)
        h.run(for: .seconds(1))
        #expect(h.lite.selectedAddress == Addr.clientAfterHandover)
        #expect(h.full.selectedPair == ICEAddressPair(local: Addr.clientAfterHandover, remote: Addr.server))
        #expect(h.liteEvents.last == TimedEvent(at: ms(t1, 30), event: .selectedAddressChanged(Addr.clientAfterHandover)))
        #expect(
            h.fullEvents.suffix(3) == [
                TimedEvent(at: t1, event: .stateChanged(.checking)),
                TimedEvent(at: ms(t1, 40), event: .selectedPairChanged(local: Addr.clientAfterHandover, remote: Addr.server)),
                TimedEvent(at: ms(t1, 40), event: .stateChanged(.connected)),
            ])
        #expect(h.violations.isEmpty)
        // The old address lapses 30 s after its last check.
        h.run(for: .seconds(40))
        #expect(!h.lite.isValidatedAddress(Addr.client))
        #expect(h.lite.state == .connected)
    }

    @Test func controlledFullAgentSwitchesToControllingOn487() {
        var h = Harness(fullConfiguration: ICEAgent.Configuration(role: .controlled, tieBreaker: 42, randomSeed: 7))
        let t0 = h.start
        h.run(for: .seconds(1))
        // t0: check with ICE-CONTROLLED; +10: 487; +20: role switch and a
        // triggered check, paced to t0 + Ta = +50; +70: valid, nomination;
        // +90: selected.
        #expect(
            h.fullEvents == [
                TimedEvent(at: t0, event: .stateChanged(.checking)),
                TimedEvent(at: ms(t0, 20), event: .roleChanged(.controlling)),
                TimedEvent(at: ms(t0, 90), event: .selectedPairChanged(local: Addr.client, remote: Addr.server)),
                TimedEvent(at: ms(t0, 90), event: .stateChanged(.connected)),
            ])
        #expect(h.full.role == .controlling)
        #expect(h.lite.counters.rejected == 1)
        #expect(h.lite.selectedAddress == Addr.client)
        #expect(h.violations.isEmpty)
    }

    @Test func iceRestartReconnectsWithNewCredentials() throws {
        var h = Harness()
        h.run(for: .seconds(3))
        let t1 = h.clock.now
        h.full.restart(newLocalCredentials: Creds.client2)
        h.lite.restart(localCredentials: Creds.server2, remoteCredentials: Creds.client2, now: t1)
        #expect(h.full.state == .checking)
        // Media keeps its path during the restart.
        #expect(h.full.selectedPair == ICEAddressPair(local: Addr.client, remote: Addr.server))
        #expect(h.lite.selectedAddress == Addr.client)
        h.run(for: .milliseconds(100))
        #expect(h.net.log.last?.deliverAt ?? t1 <= t1)  // nothing sent without remote credentials
        h.full.addRemoteCandidate(.host(Addr.server))
        h.full.setRemoteCredentials(Creds.server2, now: h.clock.now)
        let t2 = h.clock.now
        h.run(for: .seconds(1))
        #expect(h.full.state == .connected)
        #expect(
            h.fullEvents.suffix(2) == [
                TimedEvent(at: t1, event: .stateChanged(.checking)),
                TimedEvent(at: ms(t2, 40), event: .stateChanged(.connected)),
            ])
        #expect(h.lite.state == .connected)
        // Checks under the old password are now refused with 401.
        h.lite.handleSTUN(clientCheck(), from: Addr.client, now: h.clock.now)
        let response = h.lite.pollTransmit()
        let bytes = try #require(response).bytes
        #expect(try STUNMessage.parse(bytes).errorCode?.code == 401)
        h.run(for: .seconds(60))
        #expect(h.lite.state == .connected)
        #expect(h.violations.isEmpty)
    }

    @Test func unauthenticatedTrafficFromAStrangerChangesNothing() {
        var h = Harness()
        h.run(for: .seconds(1))
        let before = (h.lite.selectedAddress, h.lite.nextDeadline, h.liteEvents.count)
        let attacks: [[UInt8]] = [
            clientCheck(password: "wrongpasswordwrongpassw", useCandidate: true),
            clientCheck(username: "nope:clnt", useCandidate: true),
            clientCheck(useCandidate: true, control: .controlled(tieBreaker: 1)),
            Array(clientCheck(useCandidate: true).dropLast(8)),  // FINGERPRINT cut: malformed length
        ]
        for bytes in attacks {
            h.lite.handleSTUN(bytes, from: Addr.stranger, now: h.clock.now)
        }
        #expect(h.lite.selectedAddress == before.0)
        #expect(h.lite.nextDeadline == before.1)
        #expect(!h.lite.isValidatedAddress(Addr.stranger))
        h.drain()
        #expect(h.liteEvents.count == before.2)
        #expect(h.violations.isEmpty)
    }
}
