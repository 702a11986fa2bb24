import ICE
import SFUTesting
import STUN
import Testing
import Wire

/// The full agent alone: what it sends, when, and what it accepts.
@Suite struct ICEAgentTests {
    let t0 = Instant(nanoseconds: 1_000_000_000)

    func agent(
        _ configuration: ICEAgent.Configuration = ICEAgent.Configuration(tieBreaker: 42, randomSeed: 7),
        remotes: [TransportAddress] = [Addr.server]
    ) -> ICEAgent {
        var a = ICEAgent(localCredentials: Creds.client, configuration: configuration)
        a.addLocalCandidate(.host(Addr.client))
        for r in remotes { a.addRemoteCandidate(.host(r)) }
        a.endOfCandidates()
        a.setRemoteCredentials(Creds.server, now: t0)
        return a
    }

    @Test func checkCarriesUsernamePriorityRoleIntegrityAndFingerprint() throws {
        var a = agent()
        #expect(a.nextDeadline == t0)
        a.handleTimeout(now: t0)
        let sent = a.pollTransmit()
        let out = try #require(sent)
        #expect(out.from == Addr.client)
        #expect(out.to == Addr.server)
        let m = try STUNMessage.parse(out.bytes)
        #expect(m.type == .bindingRequest)
        #expect(m.username == "srvr:clnt")
        // prflx type preference 110, local preference 32767 (IPv4), component 1.
        #expect(m.priority == UInt32(1_853_882_367))  // 110 << 24 | 32767 << 8 | 255
        #expect(m.iceControlling == 42)
        #expect(m.iceControlled == nil)
        #expect(m.useCandidate == false)
        #expect(m.verifyMessageIntegrity(key: Creds.server.key, in: out.bytes))
        #expect(m.verifyFingerprint(in: out.bytes))
    }

    @Test func retransmitsOnDoublingRTOThenFails() throws {
        var a = agent()
        var sends: [Instant] = []
        var ids: Set<TransactionID> = []
        var now = t0
        while let d = a.nextDeadline, d <= t0 + .seconds(40) {
            now = d
            a.handleTimeout(now: now)
            while let out = a.pollTransmit() {
                sends.append(now)
                ids.insert(try STUNMessage.parse(out.bytes).transactionID)
            }
        }
        #expect(sends == [0, 250, 750, 1750, 3750, 7750, 15750].map { ms(t0, $0) })
        #expect(ids.count == 1)
        // 16 initial RTOs after the last transmission the only pair fails,
        // and with end-of-candidates the agent fails.
        #expect(now == ms(t0, 19750))
        #expect(a.state == .failed)
        #expect(a.nextDeadline == nil)
    }

    @Test func newChecksArePacedAtTa() throws {
        let second = TransportAddress(ipv4: 10, 0, 0, 2, port: 3478)
        var a = agent(remotes: [Addr.server, second])
        a.handleTimeout(now: t0)
        let first = a.pollTransmit()
        #expect(try #require(first).to == Addr.server)
        #expect(a.pollTransmit() == nil)
        #expect(a.nextDeadline == ms(t0, 50))
        a.handleTimeout(now: ms(t0, 50))
        let next = a.pollTransmit()
        #expect(try #require(next).to == second)
    }

    @Test func pairsFormOnlyWithinAnAddressFamily() {
        let v6 = TransportAddress(ipv6: 0x2001_0DB8_0000_0000, 1, port: 3478)
        let a = agent(remotes: [Addr.server, v6])
        #expect(a.checklist == [ICEAddressPair(local: Addr.client, remote: Addr.server)])
    }

    @Test func responsesThatFailAuthenticationOrMatchNothingAreIgnored() throws {
        var a = agent()
        a.handleTimeout(now: t0)
        let sent = a.pollTransmit()
        let check = try STUNMessage.parse(try #require(sent).bytes)
        let id = check.transactionID
        let pair = ICEAddressPair(local: Addr.client, remote: Addr.server)
        let forged: [[UInt8]] = [
            // Wrong key (the client's own password).
            try STUNMessageBuilder.bindingSuccessResponse(
                transactionID: id, xorMappedAddress: Addr.client,
                key: Creds.client.key),
            // No integrity.
            try STUNMessageBuilder.bindingSuccessResponse(transactionID: id, xorMappedAddress: Addr.client, key: nil),
            // Unknown transaction.
            try STUNMessageBuilder.bindingSuccessResponse(
                transactionID: TransactionID(high: 7, low: 7),
                xorMappedAddress: Addr.client, key: Creds.server.key),
        ]
        for bytes in forged { a.handleSTUN(bytes, from: Addr.server, to: Addr.client, now: ms(t0, 10)) }
        #expect(a.counters.discarded == 3)
        #expect(!a.isValid(pair))
        // The genuine response from the wrong address fails the pair
        // (RFC 8445 section 7.2.5.2.1), so it never becomes valid.
        let genuine = try STUNMessageBuilder.bindingSuccessResponse(
            transactionID: id, xorMappedAddress: Addr.client,
            key: Creds.server.key)
        a.handleSTUN(genuine, from: Addr.stranger, to: Addr.client, now: ms(t0, 20))
        #expect(!a.isValid(pair))
        #expect(a.selectedPair == nil)
        #expect(a.state == .failed)  // the only pair failed, end-of-candidates
    }

    @Test func roleConflictOnReceiveIsDecidedByTieBreaker() throws {
        // We are controlling with 42; a peer controlling with a larger
        // tie-breaker wins: we switch to controlled and answer.
        var a = agent()
        a.handleSTUN(
            clientCheck(
                username: "clnt:srvr", password: Creds.client.password,
                control: .controlling(tieBreaker: 100)),
            from: Addr.server, to: Addr.client, now: t0)
        #expect(a.role == .controlled)
        #expect(a.pollEvent() == .stateChanged(.checking))
        #expect(a.pollEvent() == .roleChanged(.controlled))
        let answered = a.pollTransmit()
        let response = try STUNMessage.parse(try #require(answered).bytes)
        #expect(response.type == .bindingSuccessResponse)
        #expect(response.xorMappedAddress == Addr.server)

        // A smaller tie-breaker loses: 487, and we stay controlling.
        var b = agent()
        b.handleSTUN(
            clientCheck(
                username: "clnt:srvr", password: Creds.client.password,
                control: .controlling(tieBreaker: 10)),
            from: Addr.server, to: Addr.client, now: t0)
        #expect(b.role == .controlling)
        let rejected = b.pollTransmit()
        let out = try #require(rejected)
        let rejection = try STUNMessage.parse(out.bytes)
        #expect(rejection.errorCode == .roleConflict)
        #expect(rejection.verifyMessageIntegrity(key: Creds.client.key, in: out.bytes))
    }

    @Test func peerReflexiveRemoteIsLearnedFromAValidCheck() {
        var a = agent()
        a.handleSTUN(
            clientCheck(
                username: "clnt:srvr", password: Creds.client.password,
                control: .controlled(tieBreaker: 1), priority: 1234),
            from: Addr.stranger, to: Addr.client, now: t0)
        #expect(a.remoteCandidates.last?.kind == .peerReflexive)
        #expect(a.remoteCandidates.last?.priority == 1234)
        #expect(a.checklist.contains(ICEAddressPair(local: Addr.client, remote: Addr.stranger)))
    }
}

@Suite struct ICECandidateTests {
    @Test func priorityFollowsRFC8445Formula() {
        // 2^24 * 126 + 2^8 * 32767 + (256 - 1)
        #expect(ICECandidate.host(Addr.client).priority == 2_122_317_823)
        #expect(ICECandidate.host(TransportAddress(ipv6: 1, 1, port: 1)).priority == 126 << 24 | 65535 << 8 | 255)
        #expect(ICECandidate.host(Addr.client, interfaceIndex: 2).priority == 126 << 24 | 32765 << 8 | 255)
        #expect(ICECandidate.priority(kind: .peerReflexive, localPreference: 65535) == 110 << 24 | 65535 << 8 | 255)
        #expect(ICECandidate.priority(kind: .serverReflexive, localPreference: 0) == 100 << 24 | 255)
        #expect(ICECandidate.priority(kind: .relayed, localPreference: 1, component: 2) == 1 << 8 | 254)
    }

    @Test func foundationDependsOnTypeAndAddressNotPort() {
        let a = ICECandidate.host(TransportAddress(ipv4: 10, 0, 0, 1, port: 1))
        let b = ICECandidate.host(TransportAddress(ipv4: 10, 0, 0, 1, port: 2))
        let c = ICECandidate.host(TransportAddress(ipv4: 10, 0, 0, 2, port: 1))
        #expect(a.foundation == b.foundation)
        #expect(a.foundation != c.foundation)
        #expect(ICECandidate.foundation(kind: .peerReflexive, address: a.address) != a.foundation)
    }

    @Test func randomCredentialsUseIceCharsAndRFCLengths() {
        let c = ICECredentials.random()
        #expect(c.ufrag.utf8.count == 8)
        #expect(c.password.utf8.count == 24)
        #expect(c.isValid)
        #expect(ICECredentials.random() != c)
        #expect(!ICECredentials(ufrag: "abc", password: String(repeating: "a", count: 22)).isValid)
        #expect(!ICECredentials(ufrag: "ab:c", password: String(repeating: "a", count: 22)).isValid)
        #expect(!"\(c)".contains(c.password))
    }

    @Test func pseudoRandomIntervalIsSeededAndInRange() {
        var a = ICEPseudoRandom(seed: 5)
        var b = ICEPseudoRandom(seed: 5)
        for _ in 0..<100 {
            let d = a.duration(in: .seconds(4) ... .seconds(6))
            #expect(d == b.duration(in: .seconds(4) ... .seconds(6)))
            #expect(d >= .seconds(4) && d <= .seconds(6))
        }
    }
}
