import DTLS
import ICE
import MediaRouter
import PeerSession
import SFUTesting
import Testing
import Wire

/// The engine's timers on a virtual clock: server transports that never
/// see a check fail at their ICE connect deadline (creation + 30 s), so
/// creating them a millisecond apart gives a known deadline order.
struct TransportEngineTimerTests {
    private final class Recorder: DatagramOutput {
        var datagrams = 0
        func send(to address: TransportAddress, from source: TransportAddress?, _ write: (UnsafeMutableRawBufferPointer) -> Int) {
            datagrams += 1
        }
        func send(_ bytes: UnsafeRawBufferPointer, to address: TransportAddress, from source: TransportAddress?) {
            datagrams += 1
        }
    }

    private static let certificate = try! DTLSCertificate.generate(issuedAt: 1_790_000_000)

    /// `count` transports, the i-th created at `start + i ms`.
    private static func engine(count: Int, start: Instant) throws -> TransportEngine {
        let engine = TransportEngine()
        for i in 0..<count {
            let t = try PeerTransport(
                role: .server, certificate: certificate,
                localCredentials: ICECredentials(ufrag: "u\(i)", password: "timer-test-password-\(i)"),
                configuration: PeerTransport.Configuration(), now: start + .milliseconds(Int64(i)))
            engine.add(t, id: TransportID(UInt64(i)))
        }
        return engine
    }

    @Test func deadlinesFireInOrderAndRemovedOrClosedTransportsNeverFail() throws {
        let start = Instant(nanoseconds: 1_000_000_000)
        let engine = try Self.engine(count: 50, start: start)
        var failedOrder: [UInt64] = []
        engine.onEvent = { id, event in
            if case .failed = event { failedOrder.append(id.rawValue) }
        }
        let output = Recorder()
        engine.remove(TransportID(3))
        engine.remove(TransportID(40))
        // Closing changes the deadline to none: the old entry must not fire.
        engine.transport(TransportID(7))?.close(now: start)
        engine.flushAll(output: output)
        #expect(engine.nextDeadline() == start + .seconds(30))
        var clock = VirtualClock(start: start)
        while let d = engine.nextDeadline(), clock.now < start + .seconds(60) {
            clock.advance(to: d)
            engine.timeout(now: clock.now, output: output)
        }
        let expected = (0..<50).filter { ![3, 40, 7].contains($0) }.map(UInt64.init)
        #expect(failedOrder == expected)
        #expect(engine.transportCount == 1)  // the closed one stays until its owner removes it
        #expect(engine.nextDeadline() == nil)
    }

    /// A wake-up visits the due and stale entries, not every transport: the
    /// same visits with 20 transports as with 400.
    @Test func wakeCostIsIndependentOfTransportCount() throws {
        var costs: [[UInt64]] = []
        for count in [20, 400] {
            let start = Instant(nanoseconds: 1_000_000_000)
            let engine = try Self.engine(count: count, start: start)
            let output = Recorder()
            _ = engine.nextDeadline()  // reads every new transport's deadline once
            var cost: [UInt64] = []
            var before = engine.timerVisits
            for step in 0..<100 {
                _ = engine.nextDeadline()
                engine.timeout(now: start + .milliseconds(Int64(step)), output: output)
                engine.flushAll(output: output)
            }
            cost.append(engine.timerVisits - before)
            before = engine.timerVisits
            // The first deadline: one transport fails, one is visited.
            engine.timeout(now: start + .seconds(30), output: output)
            _ = engine.nextDeadline()
            cost.append(engine.timerVisits - before)
            #expect(engine.transportCount == count - 1)
            costs.append(cost)
        }
        #expect(costs[0] == [0, 2])
        #expect(costs[1] == costs[0])
    }
}

extension TransportEngineTimerTests {
    /// A transport added under the id of one removed before does not
    /// inherit its heap entries: it fails at its own deadline, not the
    /// earlier one.
    @Test func aReusedIDKeepsOnlyItsOwnDeadline() throws {
        let start = Instant(nanoseconds: 1_000_000_000)
        let engine = TransportEngine()
        let output = Recorder()
        var failures = 0
        engine.onEvent = { _, event in if case .failed = event { failures += 1 } }
        func transport(at t: Instant) throws -> PeerTransport {
            try PeerTransport(
                role: .server, certificate: Self.certificate,
                localCredentials: ICECredentials(ufrag: "reused", password: "timer-test-password-reused"),
                configuration: PeerTransport.Configuration(), now: t)
        }
        engine.add(try transport(at: start), id: TransportID(1))
        #expect(engine.nextDeadline() == start + .seconds(30))
        engine.remove(TransportID(1))
        engine.add(try transport(at: start + .seconds(10)), id: TransportID(1))
        #expect(engine.nextDeadline() == start + .seconds(40))
        engine.timeout(now: start + .seconds(30), output: output)
        #expect(failures == 0)
        engine.timeout(now: start + .seconds(40), output: output)
        #expect(failures == 1)
    }
}
