import RTCP
import SFUTesting
import Testing
import Wire

@testable import Forwarding

@Test func sendsTwoOfAHundredPLIsInOneSecond() {
    var throttle = KeyframeRequestThrottle(senderSSRC: SSRC(1), mediaSSRC: SSRC(0xBEEF))
    var clock = VirtualClock()
    let start = clock.now
    var sentAt: [Duration] = []
    for _ in 0..<100 {
        if case .send(let request) = throttle.request(.pli, now: clock.now) {
            #expect(request == .pli(PictureLossIndication(senderSSRC: SSRC(1), mediaSSRC: SSRC(0xBEEF))))
            sentAt.append(clock.now - start)
        }
        clock.advance(by: .milliseconds(10))
    }
    #expect(sentAt == [.zero, .milliseconds(500)])
}

@Test func suppressesUntilTheIntervalHasPassed() {
    var throttle = KeyframeRequestThrottle(senderSSRC: SSRC(1), mediaSSRC: SSRC(2), interval: .milliseconds(200))
    let t0 = Instant(nanoseconds: 5_000_000_000)
    #expect(throttle.request(.pli, now: t0) != .suppress)
    #expect(throttle.request(.pli, now: t0 + .milliseconds(199)) == .suppress)
    #expect(throttle.nextAllowed == t0 + .milliseconds(200))
    #expect(throttle.request(.pli, now: t0 + .milliseconds(200)) != .suppress)
}

@Test func incrementsFIRSequenceNumberPerFIRSent() {
    var throttle = KeyframeRequestThrottle(senderSSRC: SSRC(1), mediaSSRC: SSRC(0xBEEF))
    var clock = VirtualClock()
    func fir(_ seq: UInt8) -> KeyframeRequestDecision {
        .send(.fir(FullIntraRequest(senderSSRC: SSRC(1), entries: [FIREntry(ssrc: SSRC(0xBEEF), sequenceNumber: seq)])))
    }
    #expect(throttle.request(.fir, now: clock.now) == fir(0))
    clock.advance(by: .milliseconds(100))
    #expect(throttle.request(.fir, now: clock.now) == .suppress)  // consumes no number
    clock.advance(by: .milliseconds(500))
    #expect(throttle.request(.fir, now: clock.now) == fir(1))
    clock.advance(by: .milliseconds(500))
    // A PLI shares the window and does not consume a FIR number.
    #expect(throttle.request(.pli, now: clock.now) != .suppress)
    clock.advance(by: .milliseconds(500))
    #expect(throttle.request(.fir, now: clock.now) == fir(2))
}

@Test func firSequenceNumberWrapsModulo256() {
    var throttle = KeyframeRequestThrottle(senderSSRC: SSRC(1), mediaSSRC: SSRC(2), interval: .milliseconds(1))
    var now = Instant.zero
    for _ in 0..<256 {
        _ = throttle.request(.fir, now: now)
        now += .milliseconds(1)
    }
    #expect(throttle.nextFIRSequenceNumber == 0)
}
