import Testing
import Wire

@testable import RoomBot

/// A subscribing bot's NACKs: reorder wait, retries each RTT, repaired
/// numbers dropped, a keyframe for loss too large to repair.
@Suite struct RoomBotLossRecoveryTests {
    private func ms(_ n: Int64) -> Instant { Instant(nanoseconds: n * 1_000_000) }

    private func poll(_ recovery: inout SubscriberLossRecovery, at now: Instant) -> [(UInt32, [UInt16], Bool)] {
        var out: [(UInt32, [UInt16], Bool)] = []
        recovery.poll(now: now, roundTripTime: nil) { out.append(($0.rawValue, $1, $2)) }
        return out
    }

    @Test func gapIsNACKedAfterTheReorderWaitThenRetriedUntilRepaired() {
        var recovery = SubscriberLossRecovery()
        recovery.received(ssrc: SSRC(5), sequenceNumber: 100, arrival: ms(0), isRetransmission: false)
        recovery.received(ssrc: SSRC(5), sequenceNumber: 103, arrival: ms(1), isRetransmission: false)
        #expect(recovery.nextDeadline == ms(11))
        #expect(poll(&recovery, at: ms(5)).isEmpty)
        let first = poll(&recovery, at: ms(11))
        #expect(first.count == 1)
        #expect(first.first?.0 == 5)
        #expect(first.first?.1 == [101, 102])
        #expect(first.first?.2 == false)
        // 102 arrives as RTX; 101 is asked again one (default) RTT later.
        recovery.received(ssrc: SSRC(5), sequenceNumber: 102, arrival: ms(20), isRetransmission: true)
        #expect(poll(&recovery, at: ms(50)).isEmpty)
        #expect(poll(&recovery, at: ms(111)).first?.1 == [101])
    }

    @Test func reorderedPacketWithinTheWaitIsNeverNACKed() {
        var recovery = SubscriberLossRecovery()
        recovery.received(ssrc: SSRC(5), sequenceNumber: 10, arrival: ms(0), isRetransmission: false)
        recovery.received(ssrc: SSRC(5), sequenceNumber: 12, arrival: ms(1), isRetransmission: false)
        recovery.received(ssrc: SSRC(5), sequenceNumber: 11, arrival: ms(3), isRetransmission: false)
        #expect(poll(&recovery, at: ms(20)).isEmpty)
    }

    @Test func lossTooLargeToRepairAsksForAKeyframe() {
        var recovery = SubscriberLossRecovery()
        recovery.received(ssrc: SSRC(7), sequenceNumber: 0, arrival: ms(0), isRetransmission: false)
        recovery.received(ssrc: SSRC(7), sequenceNumber: 2000, arrival: ms(1), isRetransmission: false)
        let out = poll(&recovery, at: ms(1))
        #expect(out.count == 1)
        #expect(out.first?.1 == [])
        #expect(out.first?.2 == true)
    }
}
