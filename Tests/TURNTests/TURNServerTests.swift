import STUN
import TURN
import Testing
import Wire

@Suite struct TURNServerTests {
    let client = TURNClient(transport: .udp, address: TransportAddress(ipv4: 127, 0, 0, 1, port: 40000))

    /// Allocate without credentials, take the nonce from the 401, allocate
    /// again signed; returns the relay address.
    func allocate(_ h: inout TURNHarness, _ user: inout TURNTestUser, from client: TURNClient) throws -> TransportAddress {
        let (challenge, _) = try TURNHarness.response(
            h.send(user.request(.allocate, signed: false, TURNTestUser.allocateAttributes), from: client))
        #expect(challenge.type.messageClass == .errorResponse)
        #expect(challenge.errorCode?.code == 401)
        #expect(challenge.realm == "swiftlet")
        let nonce: String = try #require(challenge.nonce)
        user.nonce = nonce
        let (success, bytes) = try TURNHarness.response(
            h.send(user.request(.allocate, TURNTestUser.allocateAttributes), from: client))
        #expect(success.type == STUNMessageType(method: .allocate, class: .successResponse), "\(success)")
        #expect(success.verifyMessageIntegrity(key: user.key, in: bytes))
        #expect(success.turn.lifetime == 600)
        #expect(success.xorMappedAddress == client.address)
        return try #require(success.turn.xorRelayedAddress)
    }

    @Test func allocateIsChallengedThenSucceedsWithTheRESTCredentials() throws {
        var h = TURNHarness()
        var user = TURNTestUser()
        let relay = try allocate(&h, &user, from: client)
        #expect(relay == h.openedRelays.first)
        #expect(h.server.allocationCount == 1)
        #expect(h.server.nextDeadline() == h.clock.now + .seconds(600))
    }

    @Test func aRetransmittedAllocateGetsTheSameAnswerAndAnotherGets437() throws {
        var h = TURNHarness()
        var user = TURNTestUser()
        _ = try allocate(&h, &user, from: client)
        let request = user.request(.allocate, TURNTestUser.allocateAttributes)
        let (first, firstBytes) = try TURNHarness.response(h.send(request, from: client))
        #expect(first.errorCode?.code == 437)
        #expect(first.verifyMessageIntegrity(key: user.key, in: firstBytes))
        // The same transaction again: one relay only, the cached success.
        var h2 = TURNHarness()
        var user2 = TURNTestUser()
        let (challenge, _) = try TURNHarness.response(
            h2.send(user2.request(.allocate, signed: false, TURNTestUser.allocateAttributes), from: client))
        user2.nonce = challenge.nonce
        let signed = user2.request(.allocate, TURNTestUser.allocateAttributes)
        let a = h2.send(signed, from: client)
        let b = h2.send(signed, from: client)
        #expect(a == b)
        #expect(h2.openedRelays.count == 1)
    }

    @Test func wrongPasswordExpiredUsernameAndBadIntegrityGet401() throws {
        var h = TURNHarness()
        var user = TURNTestUser()
        let (challenge, _) = try TURNHarness.response(
            h.send(user.request(.allocate, signed: false, TURNTestUser.allocateAttributes), from: client))
        user.nonce = challenge.nonce
        // Integrity under another key.
        let forged = user.request(.allocate, key: Array(repeating: 7, count: 16), TURNTestUser.allocateAttributes)
        #expect(try TURNHarness.response(h.send(forged, from: client)).0.errorCode?.code == 401)
        // A password for another username.
        var other = TURNTestUser(identity: "mallory")
        other.password = user.password
        other.nonce = user.nonce
        #expect(
            try TURNHarness.response(h.send(other.request(.allocate, TURNTestUser.allocateAttributes), from: client)).0
                .errorCode?.code == 401)
        // Expired credentials, correctly signed.
        var expired = TURNTestUser(expiry: TURNHarness.unixNow - 1)
        expired.nonce = user.nonce
        #expect(
            try TURNHarness.response(h.send(expired.request(.allocate, TURNTestUser.allocateAttributes), from: client)).0
                .errorCode?.code == 401)
        #expect(h.server.allocationCount == 0)
        #expect(h.openedRelays.isEmpty)
    }

    @Test func aNonceGoesStaleAfterItsLifetimeAndIsBoundToTheClient() throws {
        var h = TURNHarness()
        var user = TURNTestUser()
        let (challenge, _) = try TURNHarness.response(
            h.send(user.request(.allocate, signed: false, TURNTestUser.allocateAttributes), from: client))
        user.nonce = challenge.nonce
        // Another client address with this client's nonce: stale.
        let elsewhere = TURNClient(transport: .udp, address: TransportAddress(ipv4: 127, 0, 0, 1, port: 40001))
        let (moved, _) = try TURNHarness.response(
            h.send(user.request(.allocate, TURNTestUser.allocateAttributes), from: elsewhere))
        #expect(moved.errorCode?.code == 438)
        h.clock.advance(by: .seconds(3601))
        let (stale, _) = try TURNHarness.response(h.send(user.request(.allocate, TURNTestUser.allocateAttributes), from: client))
        #expect(stale.errorCode?.code == 438)
        #expect(stale.nonce != nil && stale.nonce != user.nonce)
        user.nonce = stale.nonce
        let (ok, _) = try TURNHarness.response(h.send(user.request(.allocate, TURNTestUser.allocateAttributes), from: client))
        #expect(ok.type.messageClass == .successResponse)
    }

    @Test func refreshExtendsAndZeroDeletesAndExpiryReleasesTheRelay() throws {
        var h = TURNHarness()
        var user = TURNTestUser()
        let relay = try allocate(&h, &user, from: client)
        let (refreshed, _) = try TURNHarness.response(
            h.send(user.request(.refresh) { try $0.appendLifetime(seconds: 99_999) }, from: client))
        #expect(refreshed.turn.lifetime == 3600)
        #expect(h.server.nextDeadline() == h.clock.now + .seconds(3600))
        h.clock.advance(by: .seconds(3599))
        h.server.handleTimeout(now: h.clock.now)
        #expect(h.drain().isEmpty)
        h.clock.advance(by: .seconds(1))
        h.server.handleTimeout(now: h.clock.now)
        #expect(h.drain() == [.releaseRelay(relay)])
        #expect(h.server.allocationCount == 0)
        // A Refresh on nothing: 437 (with a fresh nonce: an hour passed).
        user.nonce = try TURNHarness.response(h.send(user.request(.refresh, signed: false), from: client)).0.nonce
        let (mismatch, _) = try TURNHarness.response(h.send(user.request(.refresh), from: client))
        #expect(mismatch.errorCode?.code == 437)
        // Allocate again, then delete with LIFETIME 0.
        let second = try allocate(&h, &user, from: client)
        let out = try h.send(user.request(.refresh) { try $0.appendLifetime(seconds: 0) }, from: client)
        #expect(out.contains(.releaseRelay(second)))
        #expect(h.server.allocationCount == 0)
    }

    @Test func permissionsTowardAnyAddressButTheNodesMediaAreForbidden() throws {
        var h = TURNHarness()
        var user = TURNTestUser()
        let relay = try allocate(&h, &user, from: client)
        for peer in [
            TURNHarness.stranger, TransportAddress(ipv4: 8, 8, 8, 8, port: 53), TransportAddress(ipv4: 127, 0, 0, 1, port: 10001),
        ] {
            let (refused, bytes) = try TURNHarness.response(
                h.send(user.request(.createPermission) { try $0.appendXORPeerAddress(peer) }, from: client))
            #expect(refused.errorCode?.code == 403, "\(peer)")
            #expect(refused.verifyMessageIntegrity(key: user.key, in: bytes))
            let (bind, _) = try TURNHarness.response(
                h.send(
                    user.request(.channelBind) {
                        try $0.appendChannelNumber(0x4000)
                        try $0.appendXORPeerAddress(peer)
                    }, from: client))
            #expect(bind.errorCode?.code == 403)
        }
        // One allowed and one refused in the same request: nothing installed.
        let (mixed, _) = try TURNHarness.response(
            h.send(
                user.request(.createPermission) {
                    try $0.appendXORPeerAddress(TURNHarness.sfu)
                    try $0.appendXORPeerAddress(TURNHarness.stranger)
                }, from: client))
        #expect(mixed.errorCode?.code == 403)
        // A Send indication toward a stranger is dropped, even with the
        // SFU's permission (same IP, other port).
        let (ok, _) = try TURNHarness.response(
            h.send(user.request(.createPermission) { try $0.appendXORPeerAddress(TURNHarness.sfu) }, from: client))
        #expect(ok.type.messageClass == .successResponse)
        #expect(h.send(sendIndication(to: TURNHarness.stranger, [1, 2, 3]), from: client).isEmpty)
        #expect(
            h.send(sendIndication(to: TURNHarness.sfu, [1, 2, 3]), from: client) == [
                .toPeer(relay: relay, peer: TURNHarness.sfu, [1, 2, 3])
            ])
        // And a stranger's datagram to the relay is not passed on.
        h.server.handlePeer([9, 9], relay: relay, from: TURNHarness.stranger, now: h.clock.now)
        #expect(h.drain().isEmpty)
        #expect(h.server.counters.forbidden == 7)
    }

    func sendIndication(to peer: TransportAddress, _ data: [UInt8]) -> [UInt8] {
        var b = STUNMessageBuilder(type: STUNMessageType(method: .send, class: .indication), transactionID: .random())
        try? b.appendXORPeerAddress(peer)
        try? b.appendData(data)
        return b.bytes
    }

    @Test func peerDataArrivesAsDataIndicationUntilAChannelIsBoundThenAsChannelData() throws {
        var h = TURNHarness()
        var user = TURNTestUser()
        let relay = try allocate(&h, &user, from: client)
        // No permission yet: dropped both ways.
        h.server.handlePeer([1, 2, 3], relay: relay, from: TURNHarness.sfu, now: h.clock.now)
        #expect(h.drain().isEmpty)
        _ = try h.send(user.request(.createPermission) { try $0.appendXORPeerAddress(TURNHarness.sfu) }, from: client)
        h.server.handlePeer([1, 2, 3], relay: relay, from: TURNHarness.sfu, now: h.clock.now)
        let (indication, _) = try TURNHarness.response(h.drain())
        #expect(indication.type == STUNMessageType(method: .data, class: .indication))
        #expect(indication.turn.xorPeerAddresses == [TURNHarness.sfu])
        #expect(indication.turn.data?.valueLength == 3)

        let (bound, _) = try TURNHarness.response(
            h.send(
                user.request(.channelBind) {
                    try $0.appendChannelNumber(0x4001)
                    try $0.appendXORPeerAddress(TURNHarness.sfu)
                }, from: client))
        #expect(bound.type == STUNMessageType(method: .channelBind, class: .successResponse))
        h.server.handlePeer([1, 2, 3], relay: relay, from: TURNHarness.sfu, now: h.clock.now)
        #expect(h.drain() == [.toClient(client, [0x40, 0x01, 0, 3, 1, 2, 3])])
        // Client to peer over the channel.
        #expect(h.send([0x40, 0x01, 0, 2, 7, 8], from: client) == [.toPeer(relay: relay, peer: TURNHarness.sfu, [7, 8])])
        // An unbound channel, or a length past the bytes: dropped.
        #expect(h.send([0x40, 0x02, 0, 2, 7, 8], from: client).isEmpty)
        #expect(h.send([0x40, 0x01, 0, 9, 7, 8], from: client).isEmpty)
        // Another number for the same peer: 400.
        let (rebind, _) = try TURNHarness.response(
            h.send(
                user.request(.channelBind) {
                    try $0.appendChannelNumber(0x4002)
                    try $0.appendXORPeerAddress(TURNHarness.sfu)
                }, from: client))
        #expect(rebind.errorCode?.code == 400)
        // Permission and channel lapse: the channel lasts 600 s but its
        // permission only 300 s, so data stops at 300 s unless refreshed.
        h.clock.advance(by: .seconds(301))
        h.server.handleTimeout(now: h.clock.now)
        #expect(h.send([0x40, 0x01, 0, 2, 7, 8], from: client).isEmpty)
    }

    @Test func aStreamClientGetsPaddedChannelDataAndItsAllocationEndsWithTheConnection() throws {
        var h = TURNHarness()
        var user = TURNTestUser()
        let tcp = TURNClient(transport: .tls, address: client.address, connection: 7)
        let relay = try allocate(&h, &user, from: tcp)
        _ = try h.send(
            user.request(.channelBind) {
                try $0.appendChannelNumber(0x4000)
                try $0.appendXORPeerAddress(TURNHarness.sfu)
            }, from: tcp)
        h.server.handlePeer([1, 2, 3], relay: relay, from: TURNHarness.sfu, now: h.clock.now)
        #expect(h.drain() == [.toClient(tcp, [0x40, 0x00, 0, 3, 1, 2, 3, 0])])
        h.server.clientClosed(tcp)
        #expect(h.drain() == [.releaseRelay(relay)])
    }

    @Test func quotasPerUserAndPerNodeGet486() throws {
        var configuration = TURNServerConfiguration()
        configuration.maxAllocationsPerUser = 2
        configuration.maxAllocations = 3
        var h = TURNHarness(configuration: configuration)
        var alice = TURNTestUser()
        for port: UInt16 in 1...2 {
            _ = try allocate(
                &h, &alice, from: TURNClient(transport: .udp, address: TransportAddress(ipv4: 127, 0, 0, 1, port: port)))
        }
        let third = TURNClient(transport: .udp, address: TransportAddress(ipv4: 127, 0, 0, 1, port: 3))
        let (c, _) = try TURNHarness.response(
            h.send(alice.request(.allocate, signed: false, TURNTestUser.allocateAttributes), from: third))
        alice.nonce = c.nonce
        #expect(
            try TURNHarness.response(h.send(alice.request(.allocate, TURNTestUser.allocateAttributes), from: third)).0.errorCode?
                .code == 486)
        var bob = TURNTestUser(identity: "bob")
        _ = try allocate(&h, &bob, from: third)
        let fourth = TURNClient(transport: .udp, address: TransportAddress(ipv4: 127, 0, 0, 1, port: 4))
        let (c2, _) = try TURNHarness.response(
            h.send(bob.request(.allocate, signed: false, TURNTestUser.allocateAttributes), from: fourth))
        bob.nonce = c2.nonce
        #expect(
            try TURNHarness.response(h.send(bob.request(.allocate, TURNTestUser.allocateAttributes), from: fourth)).0.errorCode?
                .code == 486)
        #expect(h.server.allocationCount == 3)
        #expect(h.server.counters.quotaRefusals == 2)
    }

    @Test func requestsOnAnAllocationMustUseItsCredentials() throws {
        var h = TURNHarness()
        var alice = TURNTestUser()
        _ = try allocate(&h, &alice, from: client)
        var bob = TURNTestUser(identity: "bob")
        bob.nonce = alice.nonce
        let (refused, _) = try TURNHarness.response(h.send(bob.request(.refresh), from: client))
        #expect(refused.errorCode?.code == 441)
        // Alice's credentials expire; her allocation still refreshes.
        let (ok, _) = try TURNHarness.response(
            h.send(alice.request(.refresh), from: client, unixSeconds: TURNHarness.unixNow + 700))
        #expect(ok.type.messageClass == .successResponse)
    }

    @Test func allocateNeedsUDPTransportHonoursEvenPortAndRefusesReservations() throws {
        var h = TURNHarness()
        var user = TURNTestUser()
        let (c, _) = try TURNHarness.response(h.send(user.request(.allocate, signed: false), from: client))
        user.nonce = c.nonce
        #expect(try TURNHarness.response(h.send(user.request(.allocate), from: client)).0.errorCode?.code == 400)
        #expect(
            try TURNHarness.response(h.send(user.request(.allocate) { try $0.appendRequestedTransport(6) }, from: client)).0
                .errorCode?.code == 442)
        #expect(
            try TURNHarness.response(
                h.send(
                    user.request(.allocate) {
                        try $0.appendRequestedTransport()
                        try $0.appendAttribute(.evenPort, value: [0x80])
                    }, from: client)
            ).0.errorCode?.code == 508)
        // EVEN-PORT without R: an even relay port.
        let (even, _) = try TURNHarness.response(
            h.send(
                user.request(.allocate) {
                    try $0.appendRequestedTransport()
                    try $0.appendAttribute(.evenPort, value: [0])
                }, from: client))
        #expect(even.turn.xorRelayedAddress.map { $0.port % 2 == 0 } == true, "\(even)")
        _ = try h.send(user.request(.refresh) { try $0.appendLifetime(seconds: 0) }, from: client)
        h.refuseRelays = true
        #expect(
            try TURNHarness.response(h.send(user.request(.allocate, TURNTestUser.allocateAttributes), from: client)).0
                .errorCode?.code == 508)
        #expect(h.server.allocationCount == 0)
    }

    @Test func garbageAndResponsesFromClientsCostNothing() throws {
        var h = TURNHarness()
        for bytes: [UInt8] in [[], [0], [0x40], [0xFF, 1, 2, 3], Array(repeating: 0, count: 20), [0x41, 0, 0xFF, 0xFF]] {
            #expect(h.send(bytes, from: client).isEmpty)
        }
        var b = STUNMessageBuilder(type: .bindingSuccessResponse, transactionID: .random())
        try b.appendFingerprint()
        #expect(h.send(b.bytes, from: client).isEmpty)
        #expect(h.server.counters.malformed >= 2)
    }
}
