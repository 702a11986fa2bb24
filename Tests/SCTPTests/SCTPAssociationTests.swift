import Testing
import Wire

@testable import SCTP

/// Two real usrsctp associations in one process, wired back to back; time
/// is virtual. Serialised: usrsctp's timer clock is one per process.
@Suite(.serialized) struct SCTPAssociationTests {
    /// Moves packets both ways until neither side has any; a `drop` filter
    /// loses chosen packets. Returns the events each side reported.
    @discardableResult
    static func pump(
        _ a: SCTPAssociation, _ b: SCTPAssociation, now: Instant,
        drop: (_ fromA: Bool, _ packet: [UInt8]) -> Bool = { _, _ in false }
    ) -> (a: [SCTPEvent], b: [SCTPEvent]) {
        var eventsA: [SCTPEvent] = []
        var eventsB: [SCTPEvent] = []
        for _ in 0..<1000 {
            var moved = false
            while let packet = a.pollTransmit() {
                moved = true
                if !drop(true, packet) { b.handle(packet: packet, now: now) }
            }
            while let packet = b.pollTransmit() {
                moved = true
                if !drop(false, packet) { a.handle(packet: packet, now: now) }
            }
            while let event = a.pollEvent() { eventsA.append(event) }
            while let event = b.pollEvent() { eventsB.append(event) }
            if !moved { break }
        }
        return (eventsA, eventsB)
    }

    static func connectedPair(now: Instant) throws -> (SCTPAssociation, SCTPAssociation) {
        let a = try SCTPAssociation(now: now)
        let b = try SCTPAssociation(now: now)
        let (eventsA, eventsB) = pump(a, b, now: now)
        #expect(eventsA.contains(.established))
        #expect(eventsB.contains(.established))
        return (a, b)
    }

    @Test func establishesWithBothEndsConnecting() throws {
        let (a, b) = try Self.connectedPair(now: Instant(nanoseconds: 1_000_000_000))
        #expect(a.isEstablished && b.isEstablished)
    }

    @Test func deliversOrderedAndUnorderedMessagesBothWays() throws {
        let now = Instant(nanoseconds: 2_000_000_000)
        let (a, b) = try Self.connectedPair(now: now)
        try a.send(Array("hello".utf8), stream: 1, ppid: 51, reliability: .reliableOrdered)
        try b.send([1, 2, 3], stream: 2, ppid: 53, reliability: .unreliableUnordered)
        let (eventsA, eventsB) = Self.pump(a, b, now: now)
        #expect(eventsB == [.message(SCTPMessage(stream: 1, ppid: 51, unordered: false, payload: Array("hello".utf8)))])
        #expect(eventsA == [.message(SCTPMessage(stream: 2, ppid: 53, unordered: true, payload: [1, 2, 3]))])
    }

    @Test func deliversAMessageOfTheMaximumSizeInOnePiece() throws {
        let now = Instant(nanoseconds: 3_000_000_000)
        let (a, b) = try Self.connectedPair(now: now)
        let big = (0..<65_536).map { UInt8(truncatingIfNeeded: $0) }
        try a.send(big, stream: 0, ppid: 53, reliability: .reliableOrdered)
        let (_, eventsB) = Self.pump(a, b, now: now)
        #expect(eventsB == [.message(SCTPMessage(stream: 0, ppid: 53, unordered: false, payload: big))])
    }

    @Test func refusesAMessageOverTheMaximumAndKeepsTheAssociation() throws {
        let now = Instant(nanoseconds: 4_000_000_000)
        let (a, b) = try Self.connectedPair(now: now)
        #expect(throws: SCTPError.messageTooLarge(size: 65_537, limit: 65_536)) {
            try a.send([UInt8](repeating: 0, count: 65_537), stream: 0, ppid: 53, reliability: .reliableOrdered)
        }
        #expect(throws: SCTPError.streamOutOfRange(64)) {
            try a.send([1], stream: 64, ppid: 53, reliability: .reliableOrdered)
        }
        try a.send([9], stream: 0, ppid: 53, reliability: .reliableOrdered)
        #expect(Self.pump(a, b, now: now).b == [.message(SCTPMessage(stream: 0, ppid: 53, unordered: false, payload: [9]))])
    }

    @Test func garbagePacketsCostThePacketOnly() throws {
        let now = Instant(nanoseconds: 5_000_000_000)
        let (a, b) = try Self.connectedPair(now: now)
        var generator = SystemRandomNumberGenerator()
        for length in [1, 11, 12, 16, 100, 1200] {
            b.handle(packet: (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }, now: now)
        }
        // A well-formed header with our ports but a wrong checksum.
        b.handle(packet: [0x13, 0x88, 0x13, 0x88, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 4], now: now)
        Self.pump(a, b, now: now)
        try a.send([7], stream: 3, ppid: 51, reliability: .reliableOrdered)
        #expect(Self.pump(a, b, now: now).b == [.message(SCTPMessage(stream: 3, ppid: 51, unordered: false, payload: [7]))])
    }

    /// usrsctp's timer wheel runs on the ticks we give it, but it reads
    /// the real clock (gettimeofday) for RTT and to pick which chunks are
    /// old enough to resend: on a virtual clock a timeout fires and resends
    /// nothing. So retransmission is not tested here, only that the timer
    /// wheel runs on our ticks (INIT is resent at 3 s, RFC 4960 section
    /// 6.3.1's initial RTO); delivery under loss is left to the real
    /// clients on a real clock (InteropTests).
    @Test func resendsINITWhenTheTimersReachTheInitialRTO() throws {
        var now = Instant(nanoseconds: 6_000_000_000)
        let a = try SCTPAssociation(now: now)
        #expect(a.pollTransmit() != nil)
        var resentAt: [Int] = []
        for tick in 1...1000 {
            now += .milliseconds(10)
            a.handleTimeout(now: now)
            while a.pollTransmit() != nil { resentAt.append(tick) }
        }
        #expect(resentAt == [300, 900])
    }

    @Test func closingReportsClosedOnBothEnds() throws {
        let now = Instant(nanoseconds: 7_000_000_000)
        let (a, b) = try Self.connectedPair(now: now)
        a.close()
        let (eventsA, eventsB) = Self.pump(a, b, now: now)
        #expect(eventsA == [.closed])
        #expect(eventsB == [.closed])
        #expect(a.nextDeadline == nil)
    }
}
