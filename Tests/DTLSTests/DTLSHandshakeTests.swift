import Testing
import Wire

@testable import DTLS

@Test func handshakeConnectsBothSidesWithSameKeyingMaterial() throws {
    var link = try Link()
    link.handshake()
    #expect(link.clientEvents.count == 1)
    #expect(link.serverEvents.count == 1)
    let client = try #require(link.clientEvents.first?.connected)
    let server = try #require(link.serverEvents.first?.connected)
    #expect(client.srtpProfileID == 0x0007)  // SRTP_AEAD_AES_128_GCM
    #expect(server.srtpProfileID == 0x0007)
    #expect(client.keyingMaterial.count == 2 * (16 + 12))
    #expect(client.keyingMaterial == server.keyingMaterial)
    #expect(client.keyingMaterial != Array(repeating: 0, count: 56))
    #expect(client.peerFingerprint == link.serverCertificate.fingerprint(.sha256))
    #expect(server.peerFingerprint == link.clientCertificate.fingerprint(.sha256))
    #expect(client.srtpProfile == .aeadAES128GCM)
    #expect(server.srtpProfile == .aeadAES128GCM)
    // Nothing left to time once connected.
    #expect(link.client.nextDeadline == nil)
    #expect(link.server.nextDeadline == nil)
}

@Test func handshakeUsesDTLS12RecordsWithinTheMTU() throws {
    var link = try Link()
    link.handshake()
    #expect(link.sent.count >= 4)
    for datagram in link.sent {
        #expect(datagram.bytes.count <= 1200)
        let header = try #require(RecordHeader(datagram.bytes))
        // The ClientHello record may carry 0xFEFF (DTLS 1.0) for middlebox
        // compatibility; everything the server sends is DTLS 1.2.
        if datagram.direction == .serverToClient { #expect(header.version == 0xFEFD) }
    }
    #expect(RecordHeader.handshakeType(link.sent[0].bytes) == 1)  // ClientHello
    #expect(link.sent[1].direction == .serverToClient)
    #expect(RecordHeader.handshakeType(link.sent[1].bytes) == 2)  // ServerHello
}

@Test func smallMaximumDatagramSizeFragmentsFlights() throws {
    var configuration = DTLSConfiguration()
    configuration.maximumDatagramSize = 300
    var link = try Link(clientConfiguration: configuration, serverConfiguration: configuration)
    link.handshake()
    #expect(link.clientEvents.first?.connected != nil)
    #expect(link.serverEvents.first?.connected != nil)
    for datagram in link.sent { #expect(datagram.bytes.count <= 300) }
}

@Test func serverPicksGCMWhenBothOfferBoth() throws {
    var clientConfiguration = DTLSConfiguration()
    clientConfiguration.srtpProfiles = [.aesCM128HMACSHA1_80, .aeadAES128GCM]  // like Chromium: CM first
    var link = try Link(clientConfiguration: clientConfiguration)
    link.handshake()
    #expect(link.clientEvents.first?.connected?.srtpProfile == .aeadAES128GCM)
    #expect(link.serverEvents.first?.connected?.srtpProfile == .aeadAES128GCM)
}

@Test func serverPreferenceOrderDecidesTheProfile() throws {
    var serverConfiguration = DTLSConfiguration()
    serverConfiguration.srtpProfiles = [.aesCM128HMACSHA1_80, .aeadAES128GCM]
    var link = try Link(serverConfiguration: serverConfiguration)
    link.handshake()
    #expect(link.clientEvents.first?.connected?.srtpProfile == .aesCM128HMACSHA1_80)
    #expect(link.serverEvents.first?.connected?.srtpProfile == .aesCM128HMACSHA1_80)
}

@Test(arguments: SRTPProfile.allCases)
func eachProfileCanBeForcedByOneSide(profile: SRTPProfile) throws {
    var clientConfiguration = DTLSConfiguration()
    clientConfiguration.srtpProfiles = [profile]
    var link = try Link(clientConfiguration: clientConfiguration)
    link.handshake()
    let client = try #require(link.clientEvents.first?.connected)
    let server = try #require(link.serverEvents.first?.connected)
    #expect(client.srtpProfileID == profile.dtlsProfileID)
    #expect(server.srtpProfileID == profile.dtlsProfileID)
    #expect(client.keyingMaterial.count == (profile == .aesCM128HMACSHA1_80 ? 60 : 56))
    #expect(client.keyingMaterial == server.keyingMaterial)
}

@Test func noCommonSRTPProfileFails() throws {
    var clientConfiguration = DTLSConfiguration()
    clientConfiguration.srtpProfiles = [.aesCM128HMACSHA1_80]
    var serverConfiguration = DTLSConfiguration()
    serverConfiguration.srtpProfiles = [.aeadAES128GCM]
    var link = try Link(clientConfiguration: clientConfiguration, serverConfiguration: serverConfiguration)
    link.handshake()
    #expect(link.clientEvents == [.failed(.noSRTPProfile)])
    #expect(link.serverEvents == [.failed(.noSRTPProfile)])
}

@Test func emptyProfileListIsASetupError() throws {
    var configuration = DTLSConfiguration()
    configuration.srtpProfiles = []
    let certificate = try makeCertificate()
    #expect(throws: DTLSError.self) {
        _ = try DTLSEndpoint(role: .client, certificate: certificate, configuration: configuration)
    }
}

@Test func fingerprintMismatchFails() throws {
    let stranger = try makeCertificate()
    var link = try Link(clientExpects: [stranger.fingerprint(.sha256)])
    link.handshake()
    #expect(link.clientEvents == [.failed(.fingerprintMismatch)])
    #expect(link.client.nextDeadline == nil)
}

@Test func anyListedFingerprintMayMatch() throws {
    let stranger = try makeCertificate()
    // Like aiortc: several a=fingerprint lines; only the sha-512 one is right.
    let placeholder = try makeCertificate()
    var link = try Link(
        clientExpects: [stranger.fingerprint(.sha256), placeholder.fingerprint(.sha384)],
        serverExpects: nil)
    // Replace the client's expectation now that the server certificate exists.
    link.client.setExpectedPeerFingerprints([
        stranger.fingerprint(.sha256), link.serverCertificate.fingerprint(.sha512),
    ])
    link.handshake()
    #expect(link.clientEvents.first?.connected?.peerFingerprint == link.serverCertificate.fingerprint(.sha512))
}

@Test func fingerprintCheckWaitsForLateSDP() throws {
    var link = try Link(serverExpects: [])
    link.handshake()
    #expect(link.clientEvents.first?.connected != nil)
    #expect(link.serverEvents.isEmpty)  // handshake done, peer not yet authenticated
    link.server.setExpectedPeerFingerprints([link.clientCertificate.fingerprint(.sha1)])
    link.collectEvents()
    let server = try #require(link.serverEvents.first?.connected)
    #expect(server.peerFingerprint == link.clientCertificate.fingerprint(.sha1))
    #expect(server.keyingMaterial == link.clientEvents.first?.connected?.keyingMaterial)
}

@Test func lateWrongFingerprintFails() throws {
    let stranger = try makeCertificate()
    var link = try Link(serverExpects: [])
    link.handshake()
    link.server.setExpectedPeerFingerprints([stranger.fingerprint()])
    link.collectEvents()
    #expect(link.serverEvents == [.failed(.fingerprintMismatch)])
}

@Test func peerCloseNotifyIsReportedAsClosed() throws {
    var link = try Link()
    link.handshake()
    link.client.close()
    let maybeAlert = link.client.pollTransmit()
    let alert = try #require(maybeAlert)
    let header = try #require(RecordHeader(alert))
    #expect(header.contentType == 21)  // alert
    #expect(header.epoch == 1)  // encrypted under the new keys
    link.server.handle(datagram: alert, now: link.clock.now)
    link.collectEvents()
    #expect(link.serverEvents.last == .closed)
    // The server answers with its own close_notify.
    let maybeReply = link.server.pollTransmit()
    let reply = try #require(maybeReply)
    #expect(RecordHeader(reply)?.contentType == 21)
    // A closed endpoint ignores input and reports nothing more.
    link.client.handle(datagram: reply, now: link.clock.now)
    link.collectEvents()
    #expect(link.clientEvents.count == 1)
    #expect(link.serverEvents.count == 2)
}

@Test func closeBeforeHandshakeSendsNothing() throws {
    let certificate = try makeCertificate()
    var client = try DTLSEndpoint(role: .client, certificate: certificate)
    client.start(now: .zero)
    _ = client.pollTransmit()
    client.close()
    let transmit = client.pollTransmit(), event = client.pollEvent()
    #expect(transmit == nil)
    #expect(client.nextDeadline == nil)
    #expect(event == nil)
}

@Test func startDoesNothingOnServer() throws {
    let certificate = try makeCertificate()
    var server = try DTLSEndpoint(role: .server, certificate: certificate)
    server.start(now: .zero)
    let transmit = server.pollTransmit()
    #expect(transmit == nil)
    #expect(server.nextDeadline == nil)
}
