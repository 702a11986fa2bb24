import RTCP
import Testing
import Wire

@Test func parsesPictureLossIndication() throws {
    let bytes: [UInt8] = [
        0x81, 0xCE, 0x00, 0x02,  // FMT=1, PT=206, length 2
        0x00, 0x00, 0x00, 0x01,  // SSRC of packet sender
        0x6B, 0x8B, 0x45, 0x67,  // SSRC of media source
    ]
    let expected = PictureLossIndication(senderSSRC: SSRC(1), mediaSSRC: SSRC(0x6B8B_4567))
    #expect(try parseSingle(bytes) == .pictureLossIndication(expected))
    #expect(expected.serialized() == bytes)
}

@Test func rejectsTruncatedPictureLossIndication() {
    #expect(throws: RTCPParseError.truncated) { try parseCompound([0x81, 0xCE, 0x00, 0x01, 0, 0, 0, 1]) }
}

@Test func parsesFullIntraRequest() throws {
    let bytes: [UInt8] = [
        0x84, 0xCE, 0x00, 0x04,  // FMT=4, PT=206, length 4 (20 bytes)
        0x00, 0x00, 0x00, 0x01,  // SSRC of packet sender
        0x00, 0x00, 0x00, 0x00,  // SSRC of media source: unused, 0
        0x6B, 0x8B, 0x45, 0x67,  // FCI: SSRC of the media sender
        0x07, 0x00, 0x00, 0x00,  // command seq nr 7, reserved
    ]
    let expected = FullIntraRequest(senderSSRC: SSRC(1), entries: [FIREntry(ssrc: SSRC(0x6B8B_4567), sequenceNumber: 7)])
    #expect(try parseSingle(bytes) == .fullIntraRequest(expected))
    #expect(expected.serialized() == bytes)
    let two = FullIntraRequest(
        senderSSRC: SSRC(1),
        entries: [
            FIREntry(ssrc: SSRC(2), sequenceNumber: 255),
            FIREntry(ssrc: SSRC(3), sequenceNumber: 0),
        ])
    #expect(try roundTrip(.fullIntraRequest(two)) == .fullIntraRequest(two))
}

@Test func rejectsFullIntraRequestWithPartialEntry() {
    let bytes: [UInt8] = [0x84, 0xCE, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 0, 0x6B, 0x8B, 0x45, 0x67]
    #expect(throws: RTCPParseError.truncated) { try parseCompound(bytes) }
}

// A REMB as libwebrtc sends it: 1 Mbit/s for one SSRC.
let rembFixture: [UInt8] = [
    0x8F, 0xCE, 0x00, 0x05,  // FMT=15, PT=206, length 5 (24 bytes)
    0x00, 0x00, 0x00, 0x01,  // SSRC of packet sender
    0x00, 0x00, 0x00, 0x00,  // SSRC of media source: 0
    0x52, 0x45, 0x4D, 0x42,  // 'R' 'E' 'M' 'B'
    0x01,  // Num SSRC 1
    0x0B, 0xD0, 0x90,  // BR Exp 2 (6 bits), mantissa 250000 (18 bits)
    0x6B, 0x8B, 0x45, 0x67,  // SSRC feedback
]

@Test func parsesREMB() throws {
    let expected = ReceiverEstimatedMaximumBitrate(
        senderSSRC: SSRC(1), exponent: 2, mantissa: 250_000,
        ssrcs: [SSRC(0x6B8B_4567)])
    #expect(try parseSingle(rembFixture) == .receiverEstimatedMaximumBitrate(expected))
    #expect(expected.bitrate == Bitrate(bitsPerSecond: 1_000_000))
    #expect(expected.serialized() == rembFixture)
}

@Test func encodesREMBBitrateWithSmallestExponentRoundingDown() {
    let remb = ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), bitrate: .mbps(1), ssrcs: [SSRC(0x6B8B_4567)])
    #expect(remb.exponent == 2)
    #expect(remb.mantissa == 250_000)
    #expect(remb.serialized() == rembFixture)
    let odd = ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), bitrate: Bitrate(bitsPerSecond: 1_000_003), ssrcs: [])
    #expect(odd.bitrate == Bitrate(bitsPerSecond: 1_000_000))
    let small = ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), bitrate: Bitrate(bitsPerSecond: 262_143), ssrcs: [])
    #expect(small.exponent == 0)
    #expect(small.mantissa == 262_143)
    let maximum = ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), bitrate: Bitrate(bitsPerSecond: .max), ssrcs: [])
    #expect(maximum.exponent == 45)
    #expect(maximum.mantissa == 262_143)
    let negative = ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), bitrate: Bitrate(bitsPerSecond: -5), ssrcs: [])
    #expect(negative.bitrate == Bitrate(bitsPerSecond: 0))
}

@Test func rembBitrateSaturatesOnExponentOverflow() throws {
    var bytes = rembFixture
    bytes[17] = 0xFF; bytes[18] = 0xFF; bytes[19] = 0xFF  // exp 63, mantissa 262143
    guard case .receiverEstimatedMaximumBitrate(let remb) = try parseSingle(bytes) else { Issue.record("not REMB"); return }
    #expect(remb.exponent == 63)
    #expect(remb.mantissa == 262_143)
    #expect(remb.bitrate == Bitrate(bitsPerSecond: .max))
    let edge = ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), exponent: 45, mantissa: 262_143, ssrcs: [])
    #expect(edge.bitrate == Bitrate(bitsPerSecond: 262_143 << 45))
    let over = ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), exponent: 46, mantissa: 262_143, ssrcs: [])
    #expect(over.bitrate == Bitrate(bitsPerSecond: .max))
    let one = ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), exponent: 62, mantissa: 1, ssrcs: [])
    #expect(one.bitrate == Bitrate(bitsPerSecond: 1 << 62))
    let zero = ReceiverEstimatedMaximumBitrate(senderSSRC: SSRC(1), exponent: 63, mantissa: 0, ssrcs: [])
    #expect(zero.bitrate == Bitrate(bitsPerSecond: 0))
}

@Test func rembRoundTripsManySSRCs() throws {
    let remb = ReceiverEstimatedMaximumBitrate(
        senderSSRC: SSRC(9), exponent: 10, mantissa: 12345,
        ssrcs: (1...255).map { SSRC(UInt32($0)) })
    #expect(try roundTrip(.receiverEstimatedMaximumBitrate(remb)) == .receiverEstimatedMaximumBitrate(remb))
}

@Test func rejectsREMBClaiming255SSRCsWithOnePresent() {
    var bytes = rembFixture
    bytes[16] = 0xFF
    #expect(throws: RTCPParseError.countBeyondPacket) { try parseCompound(bytes) }
}

@Test func rejectsApplicationLayerFeedbackWithoutREMBIdentifier() {
    var bytes = rembFixture
    bytes[12..<16] = [0x41, 0x42, 0x43, 0x44]  // 'ABCD'
    #expect(throws: RTCPParseError.missingREMBIdentifier) { try parseCompound(bytes) }
    // Too short to hold an identifier at all.
    #expect(throws: RTCPParseError.missingREMBIdentifier) {
        try parseCompound([0x8F, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 0])
    }
}
