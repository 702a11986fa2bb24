import PeerSession
import RTCP
import RTP
import SFUTesting
import Testing
import Wire

/// The receive side of one RTP stream, as the server keeps it for each
/// publisher layer and roombot for each received track: NACK timing
/// (reorder wait, retries each RTT, repaired numbers dropped, a keyframe
/// for loss too large to repair), statistics, and the SR echo.
@Suite struct ReceivedRTPStreamTests {
    private func ms(_ n: Int64) -> Instant { Instant(nanoseconds: n * 1_000_000) }

    private func header(_ sequenceNumber: UInt16, ssrc: UInt32 = 5, timestamp: UInt32 = 0) -> RTPHeader {
        let bytes = RTPBuilders.packet(sequenceNumber: sequenceNumber, timestamp: timestamp, ssrc: ssrc, payload: [1])
        return try! RTPHeader(parsing: bytes.span.bytes)
    }

    private func poll(_ stream: inout ReceivedRTPStream, at now: Instant) -> (numbers: [UInt16], keyframe: Bool) {
        var numbers: [UInt16] = [0xFFFF]  // emptied by the poll
        let keyframe = stream.pollRepairs(now: now, roundTripTime: nil, into: &numbers)
        return (numbers, keyframe)
    }

    @Test func gapIsNACKedAfterTheReorderWaitThenRetriedUntilRepaired() {
        var stream = ReceivedRTPStream(ssrc: SSRC(5), clockRate: 90000, repairsLoss: true)
        stream.received(header(100), arrival: ms(0), isRetransmission: false)
        stream.received(header(103), arrival: ms(1), isRetransmission: false)
        #expect(stream.nextRepairDeadline == ms(11))
        #expect(stream.missingCount == 2)
        #expect(poll(&stream, at: ms(5)).numbers.isEmpty)
        let first = poll(&stream, at: ms(11))
        #expect(first.numbers == [101, 102])
        #expect(first.keyframe == false)
        // 102 arrives restored from RTX: it fills its gap and counts as
        // received; the highest sequence number stays 103.
        stream.received(header(102), arrival: ms(20), isRetransmission: true)
        #expect(stream.reception.packetsReceived == 3)
        #expect(stream.reception.extendedHighestSequenceNumber & 0xFFFF == 103)
        #expect(poll(&stream, at: ms(50)).numbers.isEmpty)
        // 101 is asked again one (default) round trip after the first NACK.
        #expect(poll(&stream, at: ms(111)).numbers == [101])
    }

    @Test func reorderedPacketWithinTheWaitIsNeverNACKed() {
        var stream = ReceivedRTPStream(ssrc: SSRC(5), clockRate: 90000, repairsLoss: true)
        stream.received(header(10), arrival: ms(0), isRetransmission: false)
        stream.received(header(12), arrival: ms(1), isRetransmission: false)
        stream.received(header(11), arrival: ms(3), isRetransmission: false)
        #expect(poll(&stream, at: ms(20)).numbers.isEmpty)
        #expect(stream.nextRepairDeadline == nil)
    }

    @Test func lossTooLargeToRepairAsksForAKeyframe() {
        var stream = ReceivedRTPStream(ssrc: SSRC(7), clockRate: 90000, repairsLoss: true)
        stream.received(header(0, ssrc: 7), arrival: ms(0), isRetransmission: false)
        stream.received(header(2000, ssrc: 7), arrival: ms(1), isRetransmission: false)
        let out = poll(&stream, at: ms(1))
        #expect(out.numbers == [])
        #expect(out.keyframe)
    }

    /// Audio, relayed tracks and light subscribers: statistics only.
    @Test func aStreamThatDoesNotRepairCountsLossButNeverNACKs() throws {
        var stream = ReceivedRTPStream(ssrc: SSRC(9), clockRate: 48000, repairsLoss: false)
        for n: UInt16 in [1, 2, 5, 6] { stream.received(header(n, ssrc: 9), arrival: ms(Int64(n)), isRetransmission: false) }
        #expect(stream.nextRepairDeadline == nil)
        #expect(stream.missingCount == 0)
        #expect(!poll(&stream, at: ms(1000)).keyframe)
        let made = stream.makeReportBlock(now: ms(10))
        let block = try #require(made)
        #expect(block.ssrc == SSRC(9))
        #expect(block.cumulativeLost == 2)
        #expect(block.fractionLost == 2 * 256 / 6)
    }

    /// RFC 3550 section 6.4.1: LSR is the middle 32 bits of the source's
    /// last SR, DLSR the time since it arrived in 1/65536 s.
    @Test func reportBlockEchoesTheLastSenderReport() throws {
        var stream = ReceivedRTPStream(ssrc: SSRC(5), clockRate: 90000, repairsLoss: true)
        let early = stream.makeReportBlock(now: ms(0))
        #expect(early == nil, "no block before the first packet")
        stream.received(header(1), arrival: ms(0), isRetransmission: false)
        let info = SenderInfo(ntpTimestamp: 0x1122_3344_5566_7788, rtpTimestamp: 0, packetCount: 1, octetCount: 1)
        stream.senderReport(info, arrival: ms(1000))
        let made = stream.makeReportBlock(now: ms(1500))
        let block = try #require(made)
        #expect(block.lastSenderReport == 0x3344_5566)
        #expect(block.delaySinceLastSenderReport == 32768)
    }
}
