import RTCP
import Testing
import Wire

// A Chrome-shaped compound: RR with one report block, then SDES with one
// CNAME chunk, as a receive-only peer sends every few seconds.
let chromeReceiverReportAndSDES: [UInt8] = [
    // RR header: V=2 P=0 RC=1, PT=201, length=7 (32 bytes)
    0x81, 0xC9, 0x00, 0x07,
    0x90, 0x2F, 0x9E, 0x2E,  // SSRC of packet sender
    0x1A, 0x2B, 0x3C, 0x4D,  // report block: SSRC of source
    0x10,  // fraction lost 16/256
    0x00, 0x00, 0x05,  // cumulative lost 5
    0x00, 0x01, 0x23, 0x45,  // extended highest seq: cycle 1, seq 0x2345
    0x00, 0x00, 0x00, 0x20,  // jitter 32
    0x8F, 0xA1, 0xB2, 0xC3,  // LSR
    0x00, 0x01, 0x00, 0x00,  // DLSR 65536 = 1 s
    // SDES header: V=2 P=0 SC=1, PT=202, length=6 (28 bytes)
    0x81, 0xCA, 0x00, 0x06,
    0x90, 0x2F, 0x9E, 0x2E,  // chunk SSRC
    0x01, 0x10,  // CNAME, 16 bytes
    0x59, 0x78, 0x33, 0x76, 0x47, 0x31, 0x5A, 0x74,  // "Yx3vG1Zt"
    0x30, 0x51, 0x39, 0x70, 0x51, 0x2B, 0x37, 0x65,  // "0Q9pQ+7e"
    0x00, 0x00,  // end of items, pad to 32 bits
]

@Test func parsesChromeReceiverReportAndSDESCompound() throws {
    let compound = try parseCompound(chromeReceiverReportAndSDES)
    #expect(compound.packetRanges == [0..<32, 32..<60])
    let expectedRR = ReceiverReport(
        ssrc: SSRC(0x902F_9E2E),
        reports: [
            ReceptionReport(
                ssrc: SSRC(0x1A2B_3C4D), fractionLost: 16, cumulativeLost: 5,
                extendedHighestSequenceNumber: 0x0001_2345, jitter: 32,
                lastSenderReport: 0x8FA1_B2C3, delaySinceLastSenderReport: 0x0001_0000)
        ])
    #expect(
        compound.packets == [
            .receiverReport(expectedRR),
            .sourceDescription(
                SourceDescription(chunks: [
                    SDESChunk(source: SSRC(0x902F_9E2E), items: [SDESItem(type: .cname, text: "Yx3vG1Zt0Q9pQ+7e")])
                ])),
        ])
    guard case .receiverReport(let rr) = compound.packets[0] else { Issue.record("not RR"); return }
    #expect(rr.profileExtension == 32..<32)
    #expect(rr.reports[0].delaySinceLastSenderReportDuration == .seconds(1))
}

@Test func compoundBuilderConcatenatesToTheFixture() throws {
    let compound = try parseCompound(chromeReceiverReportAndSDES)
    #expect(RTCPCompoundPacket.serialize(compound.packets) == chromeReceiverReportAndSDES)
}

@Test func acceptsReducedSizeCompoundWithoutReport() throws {
    // RFC 5506: a lone PLI is a valid compound.
    let pli: [UInt8] = [0x81, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2]
    #expect(try parseSingle(pli) == .pictureLossIndication(PictureLossIndication(senderSSRC: SSRC(1), mediaSSRC: SSRC(2))))
}

@Test func keepsUnknownPacketTypesOpaque() throws {
    let bytes: [UInt8] = [
        0x80, 0xCF, 0x00, 0x02, 1, 2, 3, 4, 5, 6, 7, 8,  // XR (207), 8-byte body
        0x83, 0xCD, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2,  // RTPFB FMT 3 (TMMBR), no FCI
        0x81, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2,  // PLI
    ]
    let compound = try parseCompound(bytes)
    #expect(
        compound.packets == [
            .unknown(UnknownRTCPPacket(packetType: 207, count: 0, body: 4..<12)),
            .unknown(UnknownRTCPPacket(packetType: 205, count: 3, body: 4..<12)),
            .pictureLossIndication(PictureLossIndication(senderSSRC: SSRC(1), mediaSSRC: SSRC(2))),
        ])
    #expect(compound.packetRanges == [0..<12, 12..<24, 24..<36])
}

@Test func stripsPaddingOfTheLastPacket() throws {
    // PLI with P=1, length 3 (16 bytes): 4 bytes of padding, count 4.
    let bytes: [UInt8] = [0xA1, 0xCE, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 4]
    let compound = try parseCompound(bytes)
    #expect(compound.packets == [.pictureLossIndication(PictureLossIndication(senderSSRC: SSRC(1), mediaSSRC: SSRC(2)))])
    #expect(compound.packetRanges == [0..<16])
}

@Test func rejectsEmptyBuffer() {
    #expect(throws: RTCPParseError.emptyCompound) { try parseCompound([]) }
}

@Test func rejectsTruncatedCommonHeader() {
    #expect(throws: RTCPParseError.truncatedHeader) { try parseCompound([0x80, 0xC9, 0x00]) }
    // A valid PLI followed by 2 stray bytes.
    #expect(throws: RTCPParseError.truncatedHeader) {
        try parseCompound([0x81, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2, 0x80, 0xC9])
    }
}

@Test func rejectsVersionOtherThanTwo() {
    #expect(throws: RTCPParseError.unsupportedVersion) { try parseCompound([0x40, 0xC9, 0x00, 0x01, 0, 0, 0, 1]) }
    #expect(throws: RTCPParseError.unsupportedVersion) { try parseCompound([0xC0, 0xC9, 0x00, 0x01, 0, 0, 0, 1]) }
}

@Test func rejectsLengthOverrunningTheBuffer() {
    // RR claiming length 7 (32 bytes) with 8 present.
    #expect(throws: RTCPParseError.lengthBeyondBuffer) { try parseCompound([0x81, 0xC9, 0x00, 0x07, 0, 0, 0, 1]) }
    // Maximum length field on a tiny buffer.
    #expect(throws: RTCPParseError.lengthBeyondBuffer) { try parseCompound([0x80, 0xC9, 0xFF, 0xFF]) }
}

@Test func rejectsPaddingCountLargerThanThePacket() {
    // PLI, P=1, last byte 0xFF.
    #expect(throws: RTCPParseError.invalidPadding) {
        try parseCompound([0xA1, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 0xFF])
    }
    // Padding count 12 would eat the header too: body is 8 bytes.
    #expect(throws: RTCPParseError.invalidPadding) {
        try parseCompound([0xA1, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 12])
    }
    // Padding count 0 is not a count.
    #expect(throws: RTCPParseError.invalidPadding) {
        try parseCompound([0xA1, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 0])
    }
}

@Test func paddingThatEatsFeedbackFieldsTruncatesThePacket() {
    // PLI with padding count 8: nothing left for the SSRCs.
    #expect(throws: RTCPParseError.truncated) {
        try parseCompound([0xA1, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 8])
    }
}

@Test func rejectsPaddingInANonLastPacket() {
    let bytes: [UInt8] = [
        0xA0, 0xC9, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 4,  // RR, P=1, 4 bytes of padding
        0x81, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2,  // PLI
    ]
    #expect(throws: RTCPParseError.paddingNotInLastPacket) { try parseCompound(bytes) }
}

@Test func rejectsWholeCompoundWhenOnePacketIsMalformed() {
    var bytes = chromeReceiverReportAndSDES
    bytes[41] = 0x40  // CNAME length 64: runs past the SDES packet
    #expect(throws: RTCPParseError.truncated) { try parseCompound(bytes) }
}

@Test func boundsPacketsPerCompound() throws {
    let pli: [UInt8] = [0x81, 0xCE, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2]
    let atLimit = Array(repeatElement(pli, count: RTCPCompoundPacket.maximumPackets).joined())
    #expect(try parseCompound(atLimit).packets.count == 64)
    #expect(throws: RTCPParseError.tooManyPackets) { try parseCompound(atLimit + pli) }
}
