import ICE
import SFUTesting
import STUN
import Testing
import Wire

/// The lite agent alone, fed hand-built checks.
@Suite struct ICELiteAgentTests {
    let t0 = Instant(nanoseconds: 1_000_000_000)

    func agent(remote: ICECredentials? = Creds.client) -> ICELiteAgent {
        ICELiteAgent(localCredentials: Creds.server, remoteCredentials: remote, now: t0)
    }

    /// Feeds one datagram and returns the parsed response, if any.
    func answer(
        _ lite: inout ICELiteAgent, _ bytes: [UInt8], from: TransportAddress = Addr.client
    )
        -> (STUNMessage, [UInt8])?
    {
        lite.handleSTUN(bytes, from: from, now: t0)
        guard let out = lite.pollTransmit(), out.to == from, let m = try? STUNMessage.parse(out.bytes) else { return nil }
        return (m, out.bytes)
    }

    @Test func validCheckGetsAnAuthenticatedSuccessAndValidatesTheSource() throws {
        var lite = agent()
        let (m, bytes) = try #require(answer(&lite, clientCheck()))
        #expect(m.type == .bindingSuccessResponse)
        #expect(m.transactionID == TransactionID(high: 1, low: 2))
        #expect(m.xorMappedAddress == Addr.client)
        #expect(m.verifyMessageIntegrity(key: Creds.server.key, in: bytes))
        #expect(m.verifyFingerprint(in: bytes))
        #expect(lite.isValidatedAddress(Addr.client))
        #expect(lite.selectedAddress == nil)
        #expect(lite.state == .checking)
        #expect(lite.pollEvent() == .stateChanged(.checking))
        #expect(lite.pollEvent() == nil)
        #expect(lite.learnedCandidates.map(\.priority) == [0x6E00_1EFF])
        #expect(lite.learnedCandidates.map(\.kind) == [.peerReflexive])
    }

    /// On a multihomed server the pair is (our address, theirs): each
    /// response leaves from the address its check arrived on, the selected
    /// pair remembers ours, and only a nomination moves it.
    @Test func responsesLeaveFromTheCheckedAddressAndTheNominationPicksOurs() {
        var lite = agent()
        let first = TransportAddress(ipv4: 10, 77, 1, 1, port: 3478)
        let second = TransportAddress(ipv4: 10, 77, 2, 1, port: 3478)
        lite.handleSTUN(clientCheck(useCandidate: true), from: Addr.client, to: first, now: t0)
        #expect(lite.pollTransmit()?.from == first)
        #expect(lite.selectedAddress == Addr.client)
        #expect(lite.selectedLocalAddress == first)
        // A plain check on the other address is answered from there but
        // moves nothing.
        lite.handleSTUN(clientCheck(id: TransactionID(high: 1, low: 3)), from: Addr.client, to: second, now: t0)
        #expect(lite.pollTransmit()?.from == second)
        #expect(lite.selectedLocalAddress == first)
        #expect(lite.localAddress(for: Addr.client) == second)
        // Nominated there, the same peer address moves the pair.
        lite.handleSTUN(
            clientCheck(id: TransactionID(high: 1, low: 4), useCandidate: true), from: Addr.client, to: second, now: t0)
        #expect(lite.pollTransmit()?.from == second)
        #expect(lite.selectedLocalAddress == second)
        #expect(lite.selectedAddress == Addr.client)
        // A rejected check is answered from where it arrived, too.
        lite.handleSTUN(clientCheck(password: "wrong-password-000000"), from: Addr.client, to: first, now: t0)
        #expect(lite.pollTransmit()?.from == first)
        // Without local addresses (a bound socket) nothing is set.
        var bound = agent()
        bound.handleSTUN(clientCheck(useCandidate: true), from: Addr.client, now: t0)
        #expect(bound.pollTransmit()?.from == nil)
        #expect(bound.selectedLocalAddress == nil)
    }

    @Test func useCandidateSelectsTheSourceAndSetsTheConsentDeadline() {
        var lite = agent()
        #expect(lite.nextDeadline == t0 + .seconds(30))  // connect timeout
        _ = answer(&lite, clientCheck(useCandidate: true))
        #expect(lite.selectedAddress == Addr.client)
        // A first check that nominates goes from new straight to connected.
        #expect(
            [lite.pollEvent(), lite.pollEvent(), lite.pollEvent()] == [
                .selectedAddressChanged(Addr.client), .stateChanged(.connected), nil,
            ])
        #expect(lite.nextDeadline == t0 + .seconds(30))
        lite.handleTimeout(now: t0 + .seconds(30) - .nanoseconds(1))
        #expect(lite.selectedAddress == Addr.client)
        lite.handleTimeout(now: t0 + .seconds(30))
        #expect(lite.selectedAddress == nil)
        #expect(lite.state == .failed)
        #expect([lite.pollEvent(), lite.pollEvent(), lite.pollEvent()] == [.consentExpired, .stateChanged(.failed), nil])
        #expect(lite.nextDeadline == nil)
    }

    @Test func useCandidateWithoutIceControllingDoesNotNominate() {
        var lite = agent()
        // No role attribute at all: built by hand.
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: TransactionID(high: 9, low: 9))
        try? b.appendUseCandidate()
        try? b.appendUsername("srvr:clnt")
        try? b.appendMessageIntegrity(key: Creds.server.key)
        try? b.appendFingerprint()
        #expect(answer(&lite, b.bytes)?.0.type == .bindingSuccessResponse)
        #expect(lite.selectedAddress == nil)
        #expect(lite.isValidatedAddress(Addr.client))
    }

    @Test func connectTimeoutFailsWithoutANomination() {
        var lite = agent()
        _ = answer(&lite, clientCheck())
        lite.handleTimeout(now: t0 + .seconds(30))
        #expect(lite.state == .failed)
        #expect(!lite.isValidatedAddress(Addr.client))
        // Failed is terminal until a restart: even a valid nomination is dropped.
        #expect(answer(&lite, clientCheck(useCandidate: true)) == nil)
        #expect(lite.selectedAddress == nil)
    }

    @Test func missingOrWrongFingerprintIsSilentlyDiscarded() {
        var lite = agent()
        var noFingerprint = STUNMessageBuilder(type: .bindingRequest, transactionID: TransactionID(high: 1, low: 1))
        try? noFingerprint.appendICEControlling(tieBreaker: 1)
        try? noFingerprint.appendUseCandidate()
        try? noFingerprint.appendUsername("srvr:clnt")
        try? noFingerprint.appendMessageIntegrity(key: Creds.server.key)
        var badFingerprint = clientCheck(useCandidate: true)
        badFingerprint[badFingerprint.count - 1] ^= 0x01
        for bytes in [noFingerprint.bytes, badFingerprint] {
            #expect(answer(&lite, bytes) == nil)
        }
        #expect(lite.counters.discarded == 2)
        #expect(lite.state == .new)
        #expect(lite.pollEvent() == nil)
        #expect(!lite.isValidatedAddress(Addr.client))
    }

    @Test func missingUsernameOrIntegrityGets400WithoutIntegrity() throws {
        var lite = agent()
        var noUsername = STUNMessageBuilder(type: .bindingRequest, transactionID: TransactionID(high: 1, low: 3))
        try noUsername.appendICEControlling(tieBreaker: 1)
        try noUsername.appendMessageIntegrity(key: Creds.server.key)
        try noUsername.appendFingerprint()
        var noIntegrity = STUNMessageBuilder(type: .bindingRequest, transactionID: TransactionID(high: 1, low: 4))
        try noIntegrity.appendUsername("srvr:clnt")
        try noIntegrity.appendFingerprint()
        for request in [noUsername, noIntegrity] {
            let (m, bytes) = try #require(answer(&lite, request.bytes))
            #expect(m.type == .bindingErrorResponse)
            #expect(m.transactionID == request.transactionID)
            #expect(m.errorCode?.code == 400)
            #expect(m.messageIntegrity == nil)
            #expect(m.verifyFingerprint(in: bytes))
        }
        #expect(lite.counters.rejected == 2)
        #expect(lite.state == .new)
        #expect(!lite.isValidatedAddress(Addr.client))
    }

    @Test func badUsernameOrPasswordGets401WithoutIntegrity() throws {
        var lite = agent()
        let requests = [
            clientCheck(password: "wrongpasswordwrongpassw", useCandidate: true),  // integrity fails
            clientCheck(username: "xxxx:clnt", useCandidate: true),  // not our ufrag
            clientCheck(username: "srvr:evil", useCandidate: true),  // not the signalled remote ufrag
            clientCheck(username: "srvr:", useCandidate: true),  // empty remote part
            clientCheck(username: "srvrclnt", useCandidate: true),  // no colon
        ]
        for request in requests {
            let (m, _) = try #require(answer(&lite, request))
            #expect(m.errorCode == .unauthorized)
            #expect(m.messageIntegrity == nil)
        }
        #expect(lite.counters.rejected == 5)
        #expect(lite.state == .new)
        #expect(lite.selectedAddress == nil)
        #expect(!lite.isValidatedAddress(Addr.client))
    }

    @Test func anyRemoteUfragIsAcceptedBeforeTheRemoteCredentialsAreKnown() {
        var lite = agent(remote: nil)
        #expect(answer(&lite, clientCheck(username: "srvr:whoever"))?.0.type == .bindingSuccessResponse)
        lite.setRemoteCredentials(Creds.client)
        #expect(answer(&lite, clientCheck(username: "srvr:whoever"))?.0.errorCode?.code == 401)
    }

    @Test func unknownComprehensionRequiredAttributeGets420ListingIt() throws {
        var lite = agent()
        var b = STUNMessageBuilder(type: .bindingRequest, transactionID: TransactionID(high: 5, low: 5))
        try b.appendAttribute(STUNAttributeType(0x7777), value: [1, 2, 3, 4])
        try b.appendICEControlling(tieBreaker: 1)
        try b.appendUseCandidate()
        try b.appendUsername("srvr:clnt")
        try b.appendMessageIntegrity(key: Creds.server.key)
        try b.appendFingerprint()
        let (m, bytes) = try #require(answer(&lite, b.bytes))
        #expect(m.errorCode?.code == 420)
        #expect(m.unknownAttributes == [STUNAttributeType(0x7777)])
        // The request authenticated, so the answer is authenticated too.
        #expect(m.verifyMessageIntegrity(key: Creds.server.key, in: bytes))
        #expect(lite.selectedAddress == nil)
        #expect(!lite.isValidatedAddress(Addr.client))
    }

    @Test func peerClaimingControlledGets487AndChangesNothing() throws {
        var lite = agent()
        let (m, bytes) = try #require(answer(&lite, clientCheck(useCandidate: true, control: .controlled(tieBreaker: 99))))
        #expect(m.errorCode == .roleConflict)
        #expect(m.verifyMessageIntegrity(key: Creds.server.key, in: bytes))
        #expect(lite.state == .new)
        #expect(lite.selectedAddress == nil)
        #expect(!lite.isValidatedAddress(Addr.client))
        #expect(lite.pollEvent() == nil)
    }

    @Test func indicationsAndUnexpectedResponsesAreIgnoredSilently() throws {
        var lite = agent()
        var indication = STUNMessageBuilder(type: .bindingIndication, transactionID: TransactionID(high: 2, low: 2))
        try indication.appendFingerprint()
        #expect(answer(&lite, indication.bytes) == nil)
        #expect(answer(&lite, RFC5769.sampleIPv4Response) == nil)
        #expect(answer(&lite, [0x80, 0x60, 0, 1, 2, 3]) == nil)  // RTP-looking junk
        #expect(lite.counters.indications == 1)
        #expect(lite.counters.discarded == 1)
        #expect(lite.counters.malformed == 1)
        #expect(lite.state == .new)
    }

    @Test func laterNominationFromAnotherAddressMovesTheSelection() {
        var lite = agent()
        _ = answer(&lite, clientCheck(useCandidate: true), from: Addr.client)
        _ = answer(&lite, clientCheck(), from: Addr.clientAfterHandover)
        #expect(lite.selectedAddress == Addr.client)
        #expect(lite.isValidatedAddress(Addr.clientAfterHandover))
        _ = answer(&lite, clientCheck(useCandidate: true), from: Addr.clientAfterHandover)
        #expect(lite.selectedAddress == Addr.clientAfterHandover)
        var events: [ICEEvent] = []
        while let e = lite.pollEvent() { events.append(e) }
        #expect(
            events == [
                .selectedAddressChanged(Addr.client), .stateChanged(.connected),
                .selectedAddressChanged(Addr.clientAfterHandover),
            ])
    }

    @Test func learnedAddressesAreBoundedAndTheSelectedOneIsKept() {
        var lite = agent()
        _ = answer(&lite, clientCheck(useCandidate: true), from: Addr.client)
        let others = (0..<20).map { TransportAddress(ipv4: 198, 51, 100, UInt8($0), port: 4000) }
        for a in others { _ = answer(&lite, clientCheck(), from: a) }
        #expect(lite.learnedCandidates.count == 16)
        #expect(lite.isValidatedAddress(Addr.client))
        #expect(lite.selectedAddress == Addr.client)
        #expect(others.filter { lite.isValidatedAddress($0) } == Array(others.suffix(15)))
    }

    @Test func noSingleByteCorruptionOfANominationIsAccepted() {
        let valid = clientCheck(useCandidate: true)
        var lite = agent()
        var checked = 0
        for i in 0..<valid.count {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var bytes = valid
                bytes[i] ^= flip
                lite.handleSTUN(bytes, from: Addr.stranger, now: t0)
                while lite.pollTransmit() != nil {}
                checked += 1
            }
        }
        #expect(checked == valid.count * 3)
        #expect(lite.selectedAddress == nil)
        #expect(!lite.isValidatedAddress(Addr.stranger))
        #expect(lite.counters.validChecks == 0)
        #expect(lite.state == .new)
    }
}
