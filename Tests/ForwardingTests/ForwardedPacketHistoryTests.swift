import Testing
import Wire

@testable import Forwarding

@Suite struct ForwardedPacketHistoryTests {
    private func rewrite(_ seq: UInt16) -> RTPRewrite {
        RTPRewrite(
            ssrc: SSRC(9), sequenceNumber: seq, timestamp: UInt32(seq) * 3000, pictureID: seq & 0x7FFF,
            tl0PictureIndex: UInt8(truncatingIfNeeded: seq))
    }

    @Test func returnsExactlyWhatWasRecorded() throws {
        var history = ForwardedPacketHistory()
        #expect(history.capacity == 1024)
        history.record(rewrite(65_535), sourceSSRC: SSRC(1), sourceSequenceNumber: 4000)
        history.record(rewrite(0), sourceSSRC: SSRC(2), sourceSequenceNumber: 17)
        let found = try #require(history.lookup(outgoingSequenceNumber: 65_535))
        #expect(found.sourceSSRC == SSRC(1))
        #expect(found.sourceSequenceNumber == 4000)
        #expect(found.rewrite == rewrite(65_535))
        let wrapped = try #require(history.lookup(outgoingSequenceNumber: 0))
        #expect(wrapped.sourceSSRC == SSRC(2))
        #expect(wrapped.sourceSequenceNumber == 17)
        #expect(wrapped.rewrite == rewrite(0))
    }

    @Test func neverSentIsNil() {
        var history = ForwardedPacketHistory()
        #expect(history.lookup(outgoingSequenceNumber: 0) == nil)
        history.record(rewrite(5), sourceSSRC: SSRC(1), sourceSequenceNumber: 5)
        #expect(history.lookup(outgoingSequenceNumber: 6) == nil)
        #expect(history.lookup(outgoingSequenceNumber: 5 &+ 1024) == nil)
    }

    @Test func overwrittenIsNil() {
        var history = ForwardedPacketHistory(capacity: 1000)
        #expect(history.capacity == 1024)
        for seq in UInt16(100)..<UInt16(100 + 1025) {
            history.record(rewrite(seq), sourceSSRC: SSRC(1), sourceSequenceNumber: seq &+ 7)
        }
        #expect(history.lookup(outgoingSequenceNumber: 100) == nil)
        #expect(history.lookup(outgoingSequenceNumber: 101)?.sourceSequenceNumber == 108)
        #expect(history.lookup(outgoingSequenceNumber: 1124)?.sourceSequenceNumber == 1131)
        history.removeAll()
        #expect(history.lookup(outgoingSequenceNumber: 1124) == nil)
    }

    @Test func capacityIsAPowerOfTwoInRange() {
        #expect(ForwardedPacketHistory(capacity: 0).capacity == 16)
        #expect(ForwardedPacketHistory(capacity: -5).capacity == 16)
        #expect(ForwardedPacketHistory(capacity: 3000).capacity == 4096)
        #expect(ForwardedPacketHistory(capacity: Int.max).capacity == 32768)
    }
}
