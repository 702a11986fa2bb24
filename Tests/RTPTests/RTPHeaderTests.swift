import Testing
import Wire

@testable import RTP

func parse(_ bytes: [UInt8]) throws(RTPParseError) -> RTPHeader {
    try RTPHeader(parsing: bytes.span.bytes)
}

@Suite struct RTPHeaderTests {
    @Test func parsesFixedHeaderFieldByField() throws {
        let packet: [UInt8] = [
            0x80,  // V=2 P=0 X=0 CC=0
            0xE0,  // M=1 PT=96
            0x12, 0x34,  // sequence number
            0xDE, 0xAD, 0xBE, 0xEF,  // timestamp
            0x01, 0x02, 0x03, 0x04,  // SSRC
            0xAA, 0xBB, 0xCC,  // payload
        ]
        let h = try parse(packet)
        #expect(h.marker)
        #expect(h.payloadType == PayloadType(rawValue: 96))
        #expect(h.sequenceNumber == 0x1234)
        #expect(h.timestamp == 0xDEAD_BEEF)
        #expect(h.ssrc == SSRC(0x0102_0304))
        #expect(h.csrcCount == 0)
        #expect(h.headerExtension == nil)
        #expect(!h.hasPadding)
        #expect(h.paddingLength == 0)
        #expect(h.payloadOffset == 12)
        #expect(h.payloadLength == 3)
        #expect(h.payloadRange == 12..<15)
        #expect(h.packetLength == 15)
    }

    @Test func readsCSRCListInPlace() throws {
        let packet: [UInt8] = [
            0x82, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 9,  // CC=2
            0x11, 0x11, 0x11, 0x11,  // CSRC 0
            0x22, 0x22, 0x22, 0x22,  // CSRC 1
            0x55,  // payload
        ]
        let h = try parse(packet)
        #expect(h.csrcCount == 2)
        #expect(h.csrc(at: 0, in: packet) == SSRC(0x1111_1111))
        #expect(h.csrc(at: 1, in: packet) == SSRC(0x2222_2222))
        #expect(h.csrc(at: 2, in: packet) == nil)
        #expect(h.csrc(at: -1, in: packet) == nil)
        #expect(h.payloadRange == 20..<21)
    }

    @Test func headerWithoutPayloadIsAccepted() throws {
        let h = try parse([0x80, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1])
        #expect(h.payloadLength == 0)
        #expect(h.payloadOffset == 12)
    }

    @Test func stripsPaddingFromPayload() throws {
        let packet: [UInt8] = [
            0xA0, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,  // V=2 P=1
            0xAA, 0xBB,  // payload
            0x00, 0x00, 0x03,  // padding, count 3
        ]
        let h = try parse(packet)
        #expect(h.hasPadding)
        #expect(h.paddingLength == 3)
        #expect(h.payloadLength == 2)
    }

    @Test func paddingMayFillAllBytesAfterHeader() throws {
        let h = try parse([0xA0, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 3])
        #expect(h.payloadLength == 0)
        #expect(h.paddingLength == 3)
    }

    @Test func rejectsEmptyPacket() {
        #expect(throws: RTPParseError.truncated) { try parse([]) }
    }

    @Test func rejectsTruncatedFixedHeader() {
        #expect(throws: RTPParseError.truncated) { try parse([0x80, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0]) }
        #expect(throws: RTPParseError.truncated) { try parse([0x80]) }
    }

    @Test func rejectsVersionOtherThanTwo() {
        #expect(throws: RTPParseError.unsupportedVersion(1)) { try parse([0x40, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]) }
        #expect(throws: RTPParseError.unsupportedVersion(0)) { try parse([0x00, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]) }
        #expect(throws: RTPParseError.unsupportedVersion(3)) { try parse([0xC0]) }
    }

    @Test func rejectsCSRCCountBeyondPacket() {
        // CC=15 announces 60 bytes of CSRCs; only 8 are present.
        #expect(throws: RTPParseError.truncated) {
            try parse([0x8F, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8])
        }
    }

    @Test func rejectsExtensionHeaderBeyondPacket() {
        #expect(throws: RTPParseError.truncated) { try parse([0x90, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xBE, 0xDE]) }
    }

    @Test func rejectsExtensionLengthBeyondPacket() {
        // Length 2 words announces 8 bytes; 4 are present.
        #expect(throws: RTPParseError.truncated) {
            try parse([0x90, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xBE, 0xDE, 0x00, 0x02, 0x10, 0xFF, 0, 0])
        }
    }

    @Test func rejectsPaddingCountZero() {
        #expect(throws: RTPParseError.invalidPadding) { try parse([0xA0, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xAA, 0x00]) }
    }

    @Test func rejectsPaddingLongerThanPayload() {
        #expect(throws: RTPParseError.invalidPadding) { try parse([0xA0, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xAA, 0x03]) }
    }

    @Test func rejectsPaddingBitWithNoBytesAfterHeader() {
        // The count byte would be the last SSRC byte.
        #expect(throws: RTPParseError.invalidPadding) { try parse([0xA0, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]) }
    }

    @Test func acceptsMaximalLegalPacket() throws {
        // 15 CSRCs and two-byte extensions with 255-byte values.
        let builder = RTPPacketBuilder(
            payloadType: PayloadType(masking: 111), sequenceNumber: 65535, timestamp: .max, ssrc: SSRC(.max),
            csrcs: (0..<15).map { SSRC(UInt32($0) + 100) },
            extensions: [
                .init(id: 1, value: [UInt8](repeating: 0xA1, count: 255)),
                .init(id: 255, value: [UInt8](repeating: 0xB2, count: 255)),
            ],
            paddingLength: 255)
        let packet = try builder.build(payload: [UInt8](repeating: 7, count: 1000))
        let h = try parse(packet)
        #expect(h.csrcCount == 15)
        #expect(h.csrc(at: 14, in: packet) == SSRC(114))
        #expect(h.headerExtension?.form == .twoByte(appBits: 0))
        #expect(h.extensionValueRange(id: 1, in: packet)?.count == 255)
        #expect(h.extensionValueRange(id: 255, in: packet)?.count == 255)
        #expect(h.payloadLength == 1000)
        #expect(h.paddingLength == 255)
        // 12 + 60 CSRC + 4 ext header + (2+255)*2 = 514 -> 516 padded.
        #expect(h.payloadOffset == 12 + 60 + 4 + 516)
    }

    @Test func distinguishesRTCPFromRTPOnMuxedPort() {
        let sr: [UInt8] = [0x80, 200, 0, 6]
        let rtp: [UInt8] = [0x80, 0x60, 0, 1]
        let rtpPT127Marker: [UInt8] = [0x80, 0xFF, 0, 1]
        #expect(RTPHeader.isRTCP(sr))
        #expect(RTPHeader.isRTCP([0x80, 192]))
        #expect(RTPHeader.isRTCP([0x80, 223]))
        #expect(!RTPHeader.isRTCP([0x80, 224]))
        #expect(!RTPHeader.isRTCP([0x80, 191]))
        #expect(!RTPHeader.isRTCP(rtp))
        #expect(!RTPHeader.isRTCP(rtpPT127Marker))
        #expect(!RTPHeader.isRTCP([0x80]))
    }
}
