import Testing
import Wire

@testable import DTLS

@Test func lostClientHelloIsResentExactlyAtTheOneSecondDeadline() throws {
    var link = try Link()
    let start = link.clock.now
    link.client.start(now: start)
    let first = link.client.pollTransmit()
    let clientHello = try #require(first)
    #expect(RecordHeader.handshakeType(clientHello) == 1)
    // The network loses it. Until the deadline, nothing happens.
    #expect(link.client.nextDeadline == start + .seconds(1))
    link.clock.advance(by: .milliseconds(999))
    link.client.handleTimeout(now: link.clock.now)
    let early = link.client.pollTransmit()
    #expect(early == nil)
    #expect(link.client.nextDeadline == start + .seconds(1))
    // At the deadline: the same ClientHello again, with the next record
    // sequence number (RFC 6347 section 4.2.4).
    link.clock.advance(by: .milliseconds(1))
    link.client.handleTimeout(now: link.clock.now)
    let resent = link.client.pollTransmit()
    let again = try #require(resent)
    #expect(again.count == clientHello.count)
    #expect(RecordHeader.handshakeType(again) == 1)
    #expect(Array(again[13...]) == Array(clientHello[13...]))  // same handshake message
    #expect(again[10] == clientHello[10] &+ 1)  // record sequence number + 1
    let more = link.client.pollTransmit()
    #expect(more == nil)
    #expect(link.client.nextDeadline == link.clock.now + .seconds(2))
    // Delivered this time: the handshake completes.
    link.server.handle(datagram: again, now: link.clock.now)
    link.settle()
    #expect(link.clientEvents.first?.connected != nil)
    #expect(link.serverEvents.first?.connected != nil)
}

@Test func openSSLNeverRetransmitsOnItsOwnWhileWeWait() throws {
    // OpenSSL's read path retransmits whenever its timer has expired; ours
    // is an hour long, so input before our deadline never causes a resend.
    var link = try Link()
    link.client.start(now: link.clock.now)
    _ = link.client.pollTransmit()
    let running = link.client.openSSLTimerIsRunning
    #expect(running)
    var random = XorShift(seed: 7)
    for step in 0..<50 {
        link.clock.advance(by: .milliseconds(19))
        var garbage = random.bytes(1 + random.below(200))
        if step % 2 == 0 { garbage[0] = 22 }  // looks like a handshake record
        link.client.handle(datagram: garbage, now: link.clock.now)
        link.client.handleTimeout(now: link.clock.now)
        let sent = link.client.pollTransmit()
        #expect(sent == nil, "step \(step)")
    }
    link.collectEvents()
    #expect(link.clientEvents.isEmpty)
    #expect(link.client.nextDeadline == Instant(nanoseconds: 1_000_000_000) + .seconds(1))
}

@Test func repeatedLossDoublesTheIntervalThenTimesOut() throws {
    var link = try Link()
    link.drop = { direction, _, _ in direction == .clientToServer }
    let start = link.clock.now
    link.handshake()
    while link.runUntilNextDeadline() {}
    let times = link.sent.map { ($0.at - start) / .seconds(1) }
    // 1, 2, 4, 8, 16, 32 s apart, then the 60 s cap expires unanswered.
    #expect(times == [0, 1, 3, 7, 15, 31, 63])
    #expect(link.sent.allSatisfy { RecordHeader.handshakeType($0.bytes) == 1 })
    #expect(link.clock.now - start == .seconds(123))
    #expect(link.clientEvents == [.failed(.timeout)])
    #expect(link.serverEvents.isEmpty)
    #expect(link.client.nextDeadline == nil)
    // A failed endpoint stays quiet.
    link.client.handleTimeout(now: link.clock.now + .seconds(600))
    let after = link.client.pollTransmit()
    #expect(after == nil)
}

@Test func retransmissionLimitIsConfigurable() throws {
    var configuration = DTLSConfiguration()
    configuration.maximumRetransmissions = 2
    configuration.initialRetransmissionInterval = .milliseconds(500)
    configuration.maximumRetransmissionInterval = .seconds(1)
    var link = try Link(clientConfiguration: configuration)
    link.drop = { _, _, _ in true }
    let start = link.clock.now
    link.handshake()
    while link.runUntilNextDeadline() {}
    #expect(link.sent.map { ($0.at - start) / .milliseconds(1) } == [0, 500, 1500])
    #expect(link.clock.now - start == .milliseconds(2500))
    #expect(link.clientEvents == [.failed(.timeout)])
}

@Test func lostServerFlightIsRecoveredByServerRetransmission() throws {
    // Drop the server's first flight (ServerHello .. ServerHelloDone).
    var link = try Link()
    link.drop = { direction, index, _ in direction == .serverToClient && index < 10 }
    let start = link.clock.now
    link.handshake()
    let serverFirst = link.sent.filter { $0.direction == .serverToClient }.count
    #expect(serverFirst >= 1)
    #expect(link.server.nextDeadline == start + .seconds(1))
    link.drop = { _, _, _ in false }
    // The client also times out and resends its ClientHello at the same
    // second; either way the handshake completes within one round.
    let fired = link.runUntilNextDeadline()
    #expect(fired)
    #expect(link.clock.now == start + .seconds(1))
    #expect(link.clientEvents.first?.connected != nil)
    #expect(link.serverEvents.first?.connected != nil)
}

@Test func lostFinalServerFlightIsRecoveredByClientRetransmission() throws {
    var link = try Link()
    // The server's last flight is ChangeCipherSpec + Finished: the datagrams
    // it sends after it has reported connected.
    link.client.start(now: link.clock.now)
    var serverDone = false
    var lost = 0
    while true {
        var moved = false
        while let d = link.client.pollTransmit() { moved = true; link.server.handle(datagram: d, now: link.clock.now) }
        if !serverDone, let event = link.server.pollEvent() {
            #expect(event.connected != nil)
            serverDone = true
        }
        while let d = link.server.pollTransmit() {
            moved = true
            if serverDone { lost += 1; continue }
            link.client.handle(datagram: d, now: link.clock.now)
        }
        if !moved { break }
    }
    #expect(serverDone)
    #expect(lost >= 1)
    let pending = link.client.pollEvent()
    #expect(pending == nil)
    let clientDeadline = link.client.nextDeadline
    let deadline = try #require(clientDeadline)
    #expect(link.server.nextDeadline == nil)
    // The client resends its last flight; the server, already connected,
    // answers with its last flight again.
    link.clock.advance(to: deadline)
    link.client.handleTimeout(now: link.clock.now)
    link.settle()
    #expect(link.clientEvents.count == 1)
    #expect(link.clientEvents.first?.connected != nil)
    #expect(link.serverEvents.isEmpty)  // connected was reported once, above
}
