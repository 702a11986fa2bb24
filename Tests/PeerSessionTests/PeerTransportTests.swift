import DTLS
import ICE
import PeerSession
import RTCP
import RTP
import SFUTesting
import STUN
import Testing
import Wire

@Suite struct PeerTransportTests {
    private func rtp(_ seq: UInt16, ssrc: UInt32 = 0xAABB_CCDD) -> [UInt8] {
        RTPBuilders.packet(sequenceNumber: seq, ssrc: ssrc, payload: RTPBuilders.opusPayload(frameBytes: 60))
    }

    @Test(arguments: SRTPProfile.allCases)
    func connectsAndCarriesSRTPAndSRTCPBothWays(profile: SRTPProfile) throws {
        let link = try TransportLink(serverProfiles: [profile], clientProfiles: [profile])
        #expect(link.connect())
        #expect(link.serverEvents.contains(.connected(profile)))
        #expect(link.clientEvents.contains(.connected(profile)))
        #expect(link.server.selectedAddress == link.clientAddress)
        #expect(link.client.selectedAddress == link.serverAddress)

        for seq in UInt16(1)...5 {
            #expect(link.sendMedia(rtp(seq), from: .client))
            #expect(link.sendMedia(rtp(seq, ssrc: 0x0102_0304), from: .server))
        }
        let rr = RTCPBuilders.receiverReportWithCNAME(sender: SSRC(1), cname: "bot")
        #expect(link.sendMedia(rr, rtcp: true, from: .client))
        #expect(link.sendMedia(rr, rtcp: true, from: .server))
        link.run(for: .milliseconds(100))

        // Decrypted bytes equal what was sent, in order.
        #expect(link.serverReceived.map(\.bytes) == (1...5).map { rtp($0) } + [rr])
        #expect(link.clientReceived.map(\.bytes) == (1...5).map { rtp($0, ssrc: 0x0102_0304) } + [rr])
        #expect(link.serverReceived.last?.kind == .rtcp(length: rr.count))
    }

    @Test func serverChoosesGCMWhenBothAreOffered() throws {
        let link = try TransportLink(
            serverProfiles: [.aeadAES128GCM, .aesCM128HMACSHA1_80],
            clientProfiles: [.aesCM128HMACSHA1_80, .aeadAES128GCM])
        #expect(link.connect())
        #expect(link.server.srtpProfile == .aeadAES128GCM)
        #expect(link.client.srtpProfile == .aeadAES128GCM)
    }

    @Test func handshakeCompletesWhenTheFirstDTLSFlightIsLost() throws {
        var network = InMemoryNetwork()
        nonisolated(unsafe) var droppedDTLS = 0
        network.dropRule = { bytes, _, _ in
            // Drop the client's first DTLS datagram (its ClientHello).
            guard let first = bytes.first, (20...63).contains(first), droppedDTLS == 0 else { return false }
            droppedDTLS += 1
            return true
        }
        let link = try TransportLink(network: network)
        let start = link.clock.now
        #expect(link.connect())
        #expect(droppedDTLS == 1)
        // Retransmitted after the 1 s DTLS timer (RFC 6347 section 4.2.4.1).
        #expect(link.clock.now - start >= .seconds(1))
        #expect(link.clock.now - start < .seconds(2))
    }

    @Test func fingerprintMismatchFailsBothWaysAndCarriesNoMedia() throws {
        let stranger = try DTLSCertificate.generate(issuedAt: 1_790_000_000)
        let link = try TransportLink(clientFingerprintOverride: stranger.fingerprint(.sha256))
        #expect(!link.connect(limit: .seconds(5)))
        #expect(link.serverEvents.contains(.failed(.dtls(.fingerprintMismatch))))
        #expect(link.server.state == .failed)
        #expect(!link.sendMedia(rtp(1), from: .server))
    }

    @Test func consentExpiryEndsTheTransport() throws {
        let link = try TransportLink()
        #expect(link.connect())
        let connectedAt = link.clock.now
        // The client vanishes: nothing from it reaches the server any more.
        link.network.blocked.insert(link.clientAddress)
        link.run(for: .seconds(40))
        #expect(link.serverEvents.contains(.failed(.consentExpired)))
        #expect(link.server.state == .failed)
        #expect(link.server.selectedAddress == nil)
        #expect(!link.sendMedia(rtp(9), from: .server))
        // Not before 25 s: the client's last consent check came at most ~6 s
        // after connecting, and the server waits 30 s from it (RFC 7675).
        #expect(link.clock.now - connectedAt > .seconds(25))
    }

    @Test func mediaFollowsTheClientToItsNewAddress() throws {
        let link = try TransportLink()
        #expect(link.connect())
        let old = link.clientAddress
        let new = TransportAddress(ipv4: 10, 0, 0, 3, port: 50001)
        link.moveClient(to: new)
        link.run(for: .seconds(8))
        #expect(link.server.selectedAddress == new)
        #expect(link.serverEvents.last == .selectedAddressChanged(new))
        #expect(link.server.state == .connected)
        let before = link.clientReceived.count
        #expect(link.sendMedia(rtp(42, ssrc: 7), from: .server))
        link.run(for: .milliseconds(50))
        #expect(link.clientReceived.count == before + 1)
        #expect(link.network.log.last?.to == new)
        #expect(link.network.log.last?.to != old)
    }

    @Test func unauthenticatedSTUNChangesNothing() throws {
        let link = try TransportLink()
        #expect(link.connect())
        let attacker = TransportAddress(ipv4: 10, 9, 9, 9, port: 6666)
        // A check with the right USERNAME but signed with a guessed password,
        // and one with USE-CANDIDATE and no integrity at all.
        let forged = try STUNMessageBuilder.bindingRequest(
            transactionID: .random(), username: "\(link.server.localCredentials.ufrag):\(link.client.localCredentials.ufrag)",
            priority: 1, control: .controlling(tieBreaker: 1), useCandidate: true, key: Array("guessed-password-xxxxxx".utf8))
        var bare = STUNMessageBuilder(type: .bindingRequest, transactionID: .random())
        try bare.appendUseCandidate()
        try bare.appendFingerprint()
        for var bytes in [forged, bare.bytes] {
            _ = bytes.withUnsafeMutableBytes { link.server.receive($0, from: attacker, now: link.clock.now) }
        }
        #expect(link.server.selectedAddress == link.clientAddress)
        #expect(link.server.state == .connected)
        // Media from the attacker's address is not even decrypted.
        var packet = rtp(1)
        let result = packet.withUnsafeMutableBytes { link.server.receive($0, from: attacker, now: link.clock.now) }
        #expect(result == .handled)
        #expect(link.server.counters.mediaFromUnvalidatedAddress == 1)
    }

    @Test func mediaBeforeKeysAndGarbageAreCountedNotDelivered() throws {
        let link = try TransportLink()
        // Before anything connected: nothing is validated, nothing decrypts.
        var packet = rtp(1)
        let early = packet.withUnsafeMutableBytes { link.server.receive($0, from: link.clientAddress, now: link.clock.now) }
        #expect(early == .handled)
        #expect(link.connect())
        var garbage: [UInt8] = [0x80, 0x60, 0x00]  // RTP-looking, 3 bytes
        let g = garbage.withUnsafeMutableBytes { link.server.receive($0, from: link.clientAddress, now: link.clock.now) }
        #expect(g == .handled)
        #expect(link.server.counters.srtpRejected == 1)
        var unknown: [UInt8] = [0xFF, 0x00]
        _ = unknown.withUnsafeMutableBytes { link.server.receive($0, from: link.clientAddress, now: link.clock.now) }
        #expect(link.server.counters.unknownDatagrams == 1)
        #expect(link.server.state == .connected)
    }

    @Test func replayedSRTPIsRejected() throws {
        let link = try TransportLink()
        #expect(link.connect())
        #expect(link.sendMedia(rtp(5), from: .client))
        let protected = try #require(link.network.log.last?.bytes)
        link.run(for: .milliseconds(50))
        #expect(link.serverReceived.count == 1)
        var replay = protected
        let r = replay.withUnsafeMutableBytes { link.server.receive($0, from: link.clientAddress, now: link.clock.now) }
        #expect(r == .handled)
        #expect(link.server.counters.srtpRejected == 1)
    }

    /// RFC 7714 section 8.1: a second packet under an index already
    /// protected (a resend on the media SSRC) is refused and counted, in
    /// both profiles, and the stream goes on with new numbers.
    @Test(arguments: SRTPProfile.allCases)
    func anIndexIsProtectedOnlyOnce(profile: SRTPProfile) throws {
        let link = try TransportLink(serverProfiles: [profile], clientProfiles: [profile])
        #expect(link.connect())
        #expect(link.sendMedia(rtp(40, ssrc: 0x0102_0304), from: .server))
        #expect(!link.sendMedia(rtp(40, ssrc: 0x0102_0304), from: .server))
        #expect(link.server.counters.repeatedIndexRefused == 1)
        #expect(link.sendMedia(rtp(41, ssrc: 0x0102_0304), from: .server))
        link.run(for: .milliseconds(50))
        #expect(link.clientReceived.map(\.bytes) == [rtp(40, ssrc: 0x0102_0304), rtp(41, ssrc: 0x0102_0304)])
    }

    /// The engine's path (issue #14): a consent check's answer is handed
    /// out by `sendTransmits` from the lite agent's buffer, the same bytes
    /// `pollTransmit` gives, and it refreshes consent.
    @Test func consentCheckIsAnsweredThroughSendTransmits() throws {
        let link = try TransportLink()
        #expect(link.connect())
        let id = TransactionID(high: 0x5EED, low: 42)
        let remote = link.server.localCredentials
        var check = try STUNMessageBuilder.bindingRequest(
            transactionID: id, username: "\(remote.ufrag):\(link.client.localCredentials.ufrag)", priority: 1,
            control: .controlling(tieBreaker: 1), key: remote.key)
        let source = try #require(link.server.selectedAddress)
        let now = link.clock.now
        _ = check.withUnsafeMutableBytes { link.server.receive($0, from: source, now: now) }
        var sent: [([UInt8], TransportAddress)] = []
        link.server.sendTransmits { bytes, to, _ in sent.append((Array(bytes), to)) }
        let expected = try STUNMessageBuilder.bindingSuccessResponse(
            transactionID: id, xorMappedAddress: source, key: remote.key)
        #expect(sent.map(\.0) == [expected])
        #expect(sent.map(\.1) == [source])
        #expect(link.server.pollTransmit() == nil)
        #expect(link.server.state == .connected)
    }

    @Test func staysConnectedForMinutesOnConsentRefresh() throws {
        let link = try TransportLink()
        #expect(link.connect())
        link.run(for: .seconds(180))
        #expect(link.server.state == .connected)
        #expect(link.client.state == .connected)
    }
}
