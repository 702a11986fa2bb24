import BotMedia
import RTP
import Testing
import Wire

/// A 12-byte RTP header (V=2, PT 102, SSRC `ssrc`) and `payload`.
private func rtp(
    _ sequence: UInt16, _ timestamp: UInt32, marker: Bool, _ payload: [UInt8], ssrc: UInt32 = 0x0102_0304
)
    -> [UInt8]
{
    [0x80, (marker ? 0x80 : 0) | 102, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: timestamp >> $0) }
        + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: ssrc >> $0) } + payload
}

/// Feeds packets; returns each completed frame with its Annex B bytes
/// (empty for an undecodable frame).
private func feed(
    _ packets: [[UInt8]], into assembler: inout H264FrameAssembler
) throws -> [(
    frame: H264FrameAssembler.Frame, bytes: [UInt8]
)] {
    var out: [(frame: H264FrameAssembler.Frame, bytes: [UInt8])] = []
    for p in packets {
        let span = p.span.bytes
        if let f = assembler.handle(try RTPHeader(parsing: span), packet: span, arrival: .zero) {
            out.append((f, Array(assembler.frameBuffer[0..<f.byteCount])))
        }
    }
    return out
}

private let start: [UInt8] = [0, 0, 0, 1]
/// SPS, PPS and a 2-byte IDR in one STAP-A (RFC 6184 section 5.7.1).
private let stapA: [UInt8] = [
    0x78,  // F=0 NRI=3 type 24
    0x00, 0x03, 0x67, 0x42, 0xE0,  // SPS
    0x00, 0x02, 0x68, 0xCE,  // PPS
    0x00, 0x02, 0x65, 0x88,  // IDR slice
]
private let idrAnnexB: [UInt8] = start + [0x67, 0x42, 0xE0] + start + [0x68, 0xCE] + start + [0x65, 0x88]

@Test func aSTAPAIsSplitIntoAnnexBUnits() throws {
    var a = H264FrameAssembler()
    let frames = try feed([rtp(10, 900, marker: true, stapA)], into: &a)
    #expect(frames.count == 1)
    #expect(frames[0].frame.isKeyframe && frames[0].frame.isDecodable)
    #expect(frames[0].bytes == idrAnnexB)
    #expect(a.statistics.keyframes == 1 && a.statistics.framesComplete == 1)
}

@Test func fuAFragmentsAreJoinedAndTheUnitHeaderRebuilt() throws {
    var a = H264FrameAssembler()
    let packets = [
        rtp(1, 0, marker: true, stapA),
        // A P slice (F=0, NRI=2, type 1) in three fragments.
        rtp(2, 3000, marker: false, [0x5C, 0x81, 0xA0, 0x00, 0x00, 0x03]),  // S; emulation prevention kept
        rtp(3, 3000, marker: false, [0x5C, 0x01, 0xA1]),
        rtp(4, 3000, marker: true, [0x5C, 0x41, 0xA2, 0xA3]),  // E
    ]
    let frames = try feed(packets, into: &a)
    #expect(frames.count == 2)
    #expect(frames[1].bytes == start + [0x41, 0xA0, 0x00, 0x00, 0x03, 0xA1, 0xA2, 0xA3])
    #expect(frames[1].frame.isDecodable && !frames[1].frame.isKeyframe && frames[1].frame.packetCount == 3)
}

@Test func aLostFragmentDropsTheFrameAndEverythingUntilTheNextIDR() throws {
    var a = H264FrameAssembler()
    let packets = [
        rtp(1, 0, marker: true, stapA),
        rtp(2, 3000, marker: false, [0x5C, 0x81, 0xA0]),
        // 3 lost: the middle fragment.
        rtp(4, 3000, marker: true, [0x5C, 0x41, 0xA2]),
        rtp(5, 6000, marker: true, [0x41, 0xB0]),  // complete, but its reference is gone
        rtp(6, 9000, marker: true, stapA),  // the next IDR repairs
        rtp(7, 12000, marker: true, [0x41, 0xB1]),
    ]
    let frames = try feed(packets, into: &a)
    #expect(frames.map(\.frame.rtpTimestamp) == [0, 6000, 9000, 12000])
    #expect(frames.map(\.frame.isDecodable) == [true, false, true, true])
    #expect(frames[1].bytes.isEmpty)
    let s = a.statistics
    #expect(s.packetsLost == 1 && s.framesIncomplete == 1 && s.framesUndecodable == 1 && s.keyframes == 2)
}

@Test func fragmentsWithoutTheirStartOrEndBreakTheFrame() throws {
    var a = H264FrameAssembler()
    let packets = [
        rtp(1, 0, marker: true, stapA),
        // The sender skipped S (no sequence gap): a middle fragment first.
        rtp(2, 3000, marker: true, [0x5C, 0x41, 0xA2]),
        rtp(3, 6000, marker: true, stapA),
        // A start and then a single unit while the fragment is open.
        rtp(4, 9000, marker: false, [0x5C, 0x81, 0xA0]),
        rtp(5, 9000, marker: true, [0x41, 0xB0]),
    ]
    let frames = try feed(packets, into: &a)
    #expect(frames.map(\.frame.rtpTimestamp) == [0, 6000])
    #expect(a.statistics.framesIncomplete == 2)
}

@Test func aLostMarkerGivesTheFrameUpWhenTheNextTimestampArrives() throws {
    var a = H264FrameAssembler()
    let packets = [
        rtp(1, 0, marker: true, stapA),
        rtp(2, 3000, marker: false, [0x5C, 0x81, 0xA0]),
        // 3 (the end, with the marker) lost.
        rtp(4, 6000, marker: true, stapA),
    ]
    let frames = try feed(packets, into: &a)
    #expect(frames.map(\.frame.rtpTimestamp) == [0, 6000])
    #expect(a.statistics.framesIncomplete == 1 && a.statistics.packetsLost == 1)
}

@Test func nothingIsDecodableBeforeTheFirstRefreshAndAfterAnSSRCChange() throws {
    var a = H264FrameAssembler()
    let packets = [
        rtp(1, 0, marker: true, [0x41, 0xB0]),  // a P frame first
        rtp(2, 3000, marker: true, [0x65, 0x88]),  // an IDR without its SPS and PPS: not a refresh
        rtp(3, 6000, marker: true, stapA),
        rtp(900, 7000, marker: true, [0x41, 0xB1], ssrc: 9),  // switch onto a delta frame
        rtp(901, 8000, marker: true, stapA, ssrc: 9),
    ]
    let frames = try feed(packets, into: &a)
    #expect(frames.map(\.frame.isDecodable) == [false, false, true, false, true])
    #expect(a.statistics.switches == 1 && a.statistics.switchesNotOnKeyframe == 1)
}

@Test func badPayloadsAndLatePacketsAreCountedNotUsed() throws {
    var a = H264FrameAssembler()
    let packets = [
        rtp(1, 0, marker: true, stapA),
        rtp(2, 3000, marker: true, [0x1F]),  // type 31: undefined
        rtp(3, 6000, marker: true, stapA),
        rtp(2, 3000, marker: true, [0x41, 0xB0]),  // late
        rtp(4, 9000, marker: true, [0x79, 0x00, 0x02, 0x41]),  // STAP-B: interleaved mode only
        rtp(5, 12000, marker: true, [0x78, 0x00, 0x09, 0x41]),  // STAP-A unit longer than the packet
    ]
    let frames = try feed(packets, into: &a)
    #expect(frames.map(\.frame.rtpTimestamp) == [0, 6000])
    let s = a.statistics
    #expect(s.malformedPackets == 2 && s.unsupportedPackets == 1 && s.packetsOutOfOrder == 1)
    #expect(s.framesIncomplete == 3)
}

@Test func aFrameLargerThanTheBufferIsDroppedNotTruncated() throws {
    var a = H264FrameAssembler(reassemblyCapacity: 4096)
    let piece = [UInt8](repeating: 0x22, count: 1000)
    var packets = [rtp(1, 0, marker: true, stapA), rtp(2, 3000, marker: false, [0x5C, 0x81] + piece)]
    for i in 3...6 { packets.append(rtp(UInt16(i), 3000, marker: i == 6, [0x5C, i == 6 ? 0x41 : 0x01] + piece)) }
    packets.append(rtp(7, 6000, marker: true, stapA))
    let frames = try feed(packets, into: &a)
    #expect(frames.map(\.frame.rtpTimestamp) == [0, 6000])
    #expect(a.statistics.framesTooLarge == 1 && a.statistics.framesIncomplete == 1)
}
