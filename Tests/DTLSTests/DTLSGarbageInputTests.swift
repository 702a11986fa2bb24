import Testing
import Wire

@testable import DTLS

/// What a fed endpoint may report after bad input: nothing, or a failure;
/// never a connection.
private func onlyFailures(_ events: [DTLSEvent]) -> Bool {
    events.allSatisfy { if case .failed = $0 { true } else { false } } && events.count <= 1
}

@Test func randomGarbageNeverConnectsOrCrashesAFreshServer() throws {
    let certificate = try makeCertificate()
    var random = XorShift(seed: 0xD715)
    for round in 0..<40 {
        var server = try DTLSEndpoint(role: .server, certificate: certificate)
        var events: [DTLSEvent] = []
        for _ in 0..<20 {
            var datagram = random.bytes(1 + random.below(1500))
            // Half the time make it look like a DTLS 1.2 handshake record.
            if round % 2 == 0, datagram.count >= 13 {
                datagram[0] = 22; datagram[1] = 0xFE; datagram[2] = 0xFD; datagram[3] = 0; datagram[4] = 0
            }
            server.handle(datagram: datagram, now: .zero)
            server.handleTimeout(now: Instant.zero + .seconds(200))
            while server.pollTransmit() != nil {}
            while let event = server.pollEvent() { events.append(event) }
        }
        #expect(onlyFailures(events), "round \(round): \(events)")
    }
}

@Test func emptyDatagramIsIgnored() throws {
    var link = try Link()
    link.client.start(now: link.clock.now)
    link.server.handle(datagram: [], now: link.clock.now)
    link.client.handle(datagram: [], now: link.clock.now)
    link.settle()
    #expect(link.clientEvents.first?.connected != nil)
    #expect(link.serverEvents.first?.connected != nil)
}

@Test func truncatedClientHelloRecordsAreDroppedAndTheWholeOneStillWorks() throws {
    var link = try Link()
    link.client.start(now: link.clock.now)
    let first = link.client.pollTransmit()
    let clientHello = try #require(first)
    // Every prefix: the record header claims more bytes than arrived, so
    // the record is discarded (RFC 6347 section 4.1.2.7).
    for length in 1..<clientHello.count {
        link.server.handle(datagram: Array(clientHello.prefix(length)), now: link.clock.now)
    }
    let spurious = link.server.pollTransmit()
    #expect(spurious == nil)
    link.collectEvents()
    #expect(link.serverEvents.isEmpty)
    link.server.handle(datagram: clientHello, now: link.clock.now)
    link.settle()
    #expect(link.clientEvents.first?.connected != nil)
    #expect(link.serverEvents.first?.connected != nil)
}

@Test func oversizedDatagramDoesNotCrash() throws {
    let certificate = try makeCertificate()
    var server = try DTLSEndpoint(role: .server, certificate: certificate)
    // A record header claiming 65535 bytes, followed by 70000 bytes.
    var datagram: [UInt8] = [22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
    datagram += Array(repeating: 0x41, count: 70_000)
    server.handle(datagram: datagram, now: .zero)
    datagram.withUnsafeBytes { server.handle(datagram: $0, now: .zero) }
    var events: [DTLSEvent] = []
    while let event = server.pollEvent() { events.append(event) }
    #expect(onlyFailures(events))
}

@Test func mutatedHandshakeDatagramsNeverCrashOrConnectWrongly() throws {
    // Record a clean handshake, then replay each side's input with one
    // mutation into fresh endpoints with the same certificates.
    var clean = try Link()
    clean.handshake()
    let clientCertificate = clean.clientCertificate, serverCertificate = clean.serverCertificate
    let toServer = clean.sent.filter { $0.direction == .clientToServer }.map(\.bytes)
    var random = XorShift(seed: 0xBAD5EED)
    var connections = 0, failures = 0
    for round in 0..<60 {
        var server = try DTLSEndpoint(
            role: .server, certificate: serverCertificate,
            expectedPeerFingerprints: [clientCertificate.fingerprint()])
        let victim = random.below(toServer.count)
        for (index, original) in toServer.enumerated() {
            var datagram = original
            if index == victim {
                switch round % 3 {
                case 0: datagram[random.below(datagram.count)] ^= UInt8(1 + random.below(255))
                case 1: datagram = Array(datagram.prefix(random.below(datagram.count)))
                default: datagram += random.bytes(1 + random.below(64))
                }
            }
            server.handle(datagram: datagram, now: .zero)
            while server.pollTransmit() != nil {}
        }
        while let event = server.pollEvent() {
            switch event {
            case .connected: connections += 1
            case .failed: failures += 1
            case .closed: Issue.record("closed without close_notify")
            }
        }
    }
    // Replayed client flights cannot complete a handshake with a fresh
    // server (its random differs), so nothing may connect.
    #expect(connections == 0)
    #expect(failures <= 60)
}

@Test func garbageAfterConnectingIsDroppedAndTheConnectionStays() throws {
    var link = try Link()
    link.handshake()
    var random = XorShift(seed: 99)
    for step in 0..<200 {
        var datagram = random.bytes(1 + random.below(300))
        if step % 2 == 0, datagram.count >= 13 {
            // An epoch-1 application_data record with a forged body: its
            // authentication fails and DTLS drops it silently.
            datagram[0] = 23; datagram[1] = 0xFE; datagram[2] = 0xFD; datagram[3] = 0; datagram[4] = 1
            let length = datagram.count - 13
            datagram[11] = UInt8(length >> 8); datagram[12] = UInt8(length & 0xFF)
        }
        link.server.handle(datagram: datagram, now: link.clock.now)
        link.client.handle(datagram: datagram, now: link.clock.now)
    }
    link.settle()
    #expect(link.clientEvents.count == 1)
    #expect(link.serverEvents.count == 1)
    // Still able to close cleanly afterwards.
    link.client.close()
    link.settle()
    #expect(link.serverEvents.last == .closed)
}

@Test func inputAfterFailureIsIgnored() throws {
    let stranger = try makeCertificate()
    var link = try Link(clientExpects: [stranger.fingerprint()])
    link.handshake()
    #expect(link.clientEvents == [.failed(.fingerprintMismatch)])
    for datagram in link.sent.map(\.bytes) { link.client.handle(datagram: datagram, now: link.clock.now) }
    link.client.handleTimeout(now: link.clock.now + .seconds(10))
    link.client.setExpectedPeerFingerprints([link.serverCertificate.fingerprint()])
    link.collectEvents()
    #expect(link.clientEvents.count == 1)
    let sent = link.client.pollTransmit()
    #expect(sent == nil)
}
