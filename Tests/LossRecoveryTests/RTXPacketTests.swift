import RTP
import Testing
import Wire

/// Copies `packet` into a slot of `slotSize` bytes (filled with 0xEE),
/// runs `body` on it, and returns the result with the slot's bytes.
func inSlot<R>(_ packet: [UInt8], slotSize: Int, _ body: (UnsafeMutableRawBufferPointer, Int) -> R) -> (R, [UInt8]) {
    var slot = [UInt8](repeating: 0xEE, count: slotSize)
    for (i, b) in packet.prefix(slotSize).enumerated() { slot[i] = b }
    let result = slot.withUnsafeMutableBytes { body($0, packet.count) }
    return (result, slot)
}

func wrap(_ packet: [UInt8], slotSize: Int = 1500) -> [UInt8]? {
    let (length, slot) = inSlot(packet, slotSize: slotSize) {
        RTXPacket.wrap(
            in: $0, length: $1, rtxSSRC: SSRC(0x5566_7788), rtxSequenceNumber: 0x0001,
            rtxPayloadType: PayloadType(masking: 97))
    }
    return length.map { Array(slot[0..<$0]) }
}

func unwrap(_ packet: [UInt8]) -> (packet: [UInt8], osn: UInt16)? {
    let (result, slot) = inSlot(packet, slotSize: 1500) {
        RTXPacket.unwrap(in: $0, length: $1, originalSSRC: SSRC(0x1122_3344), originalPayloadType: PayloadType(masking: 96))
    }
    return result.map { (Array(slot[0..<$0.length]), $0.originalSequenceNumber) }
}

@Suite struct RTXPacketTests {
    /// An original packet with a CSRC and a one-byte header extension.
    static let original: [UInt8] = [
        0x91,  // V=2, P=0, X=1, CC=1
        0xE0,  // M=1, PT=96
        0x12, 0x34,  // sequence number
        0xDE, 0xAD, 0xBE, 0xEF,  // timestamp
        0x11, 0x22, 0x33, 0x44,  // SSRC
        0xCA, 0xFE, 0xBA, 0xBE,  // CSRC
        0xBE, 0xDE, 0x00, 0x01,  // RFC 8285 one-byte form, 1 word
        0x10, 0xAB, 0x00, 0x00,  // ID 1, L=0: value 0xAB; 2 padding bytes
        0x01, 0x02, 0x03, 0x04, 0x05,  // payload
    ]

    @Test func wrapBuildsTheRTXPacketFieldByField() throws {
        let rtx = try #require(wrap(Self.original))
        #expect(
            rtx == [
                0x91,  // unchanged: V=2, P=0, X=1, CC=1
                0xE1,  // marker kept, PT=97
                0x00, 0x01,  // RTX sequence number
                0xDE, 0xAD, 0xBE, 0xEF,  // original timestamp
                0x55, 0x66, 0x77, 0x88,  // RTX SSRC
                0xCA, 0xFE, 0xBA, 0xBE,  // CSRC kept
                0xBE, 0xDE, 0x00, 0x01, 0x10, 0xAB, 0x00, 0x00,  // extension kept
                0x12, 0x34,  // OSN
                0x01, 0x02, 0x03, 0x04, 0x05,  // original payload
            ])
        let header = try RTPHeader(parsing: rtx.span.bytes)
        #expect(header.payloadLength == 7)
        #expect(RTXPacket.originalSequenceNumber(header: header, in: rtx.span.bytes) == 0x1234)
    }

    @Test func wrapThenUnwrapRoundTripsByteExactly() throws {
        let plain: [UInt8] = [0x80, 0x60, 0xFF, 0xFF, 0, 0, 0, 9, 0x11, 0x22, 0x33, 0x44, 0xAA, 0xBB, 0xCC]
        let noPayload: [UInt8] = [0x80, 0x60, 0x00, 0x05, 0, 0, 0, 9, 0x11, 0x22, 0x33, 0x44]
        // Two CSRCs and a two-byte-form extension.
        let twoByte: [UInt8] =
            [0x92, 0x60, 0x80, 0x00, 1, 2, 3, 4, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 1, 0, 0, 0, 2]
            + [0x10, 0x00, 0x00, 0x01, 0x03, 0x02, 0xAB, 0xCD] + Array(repeating: 0x5A, count: 1000)
        for packet in [Self.original, plain, noPayload, twoByte] {
            let rtx = try #require(wrap(packet))
            #expect(rtx.count == packet.count + 2)
            let back = try #require(unwrap(rtx))
            #expect(back.packet == packet)
            #expect(back.osn == UInt16(packet[2]) << 8 | UInt16(packet[3]))
        }
    }

    @Test func wrapDropsTheOriginalPaddingAndUnwrapDropsTheRTXPadding() throws {
        let padded: [UInt8] = [
            0xA0, 0x60, 0x00, 0x07,  // P=1, PT=96, seq 7
            0x00, 0x00, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44,
            0xAA, 0xBB,  // payload
            0x00, 0x00, 0x03,  // 3 bytes of padding
        ]
        let rtx = try #require(wrap(padded))
        #expect(rtx == [0x80, 0x61, 0x00, 0x01, 0, 0, 0, 1, 0x55, 0x66, 0x77, 0x88, 0x00, 0x07, 0xAA, 0xBB])
        #expect(try #require(unwrap(rtx)).packet == [0x80, 0x60, 0x00, 0x07, 0, 0, 0, 1, 0x11, 0x22, 0x33, 0x44, 0xAA, 0xBB])

        var paddedRTX = rtx + [0x00, 0x00, 0x00, 0x04]
        paddedRTX[0] |= 0x20
        let back = try #require(unwrap(paddedRTX))
        #expect(back.packet == [0x80, 0x60, 0x00, 0x07, 0, 0, 0, 1, 0x11, 0x22, 0x33, 0x44, 0xAA, 0xBB])
        #expect(back.osn == 7)
    }

    @Test func wrapFailsWithoutRoomForTheOSNAndLeavesTheSlotAlone() {
        let (length, slot) = inSlot(Self.original, slotSize: Self.original.count + 1) {
            RTXPacket.wrap(in: $0, length: $1, rtxSSRC: SSRC(1), rtxSequenceNumber: 1, rtxPayloadType: PayloadType(masking: 97))
        }
        #expect(length == nil)
        #expect(Array(slot[0..<Self.original.count]) == Self.original)
        #expect(wrap(Self.original, slotSize: Self.original.count + 2) != nil)
    }

    @Test func malformedOrTruncatedPacketsGiveNil() {
        var badVersion = Self.original
        badVersion[0] = 0x51
        var badPadding: [UInt8] = [0xA0, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0xAA, 0x09]
        var overrunExtension = Self.original
        overrunExtension[19] = 0x09  // 9 words of extension in a 29-byte packet
        for packet in [
            [], [0x80], Array(Self.original.prefix(11)), Array(Self.original.prefix(20)), badVersion, badPadding,
            overrunExtension,
        ] {
            #expect(wrap(packet) == nil)
            #expect(unwrap(packet) == nil)
        }
        badPadding[13] = 0
        #expect(wrap(badPadding) == nil)
    }

    @Test func lengthsOutsideTheSlotGiveNil() {
        var slot = [UInt8](repeating: 0, count: 64)
        slot.withUnsafeMutableBytes { raw in
            #expect(
                RTXPacket.wrap(
                    in: raw, length: -1, rtxSSRC: SSRC(1), rtxSequenceNumber: 1, rtxPayloadType: PayloadType(masking: 97)) == nil)
            #expect(
                RTXPacket.wrap(
                    in: raw, length: 65, rtxSSRC: SSRC(1), rtxSequenceNumber: 1, rtxPayloadType: PayloadType(masking: 97)) == nil)
            #expect(
                RTXPacket.unwrap(in: raw, length: 65, originalSSRC: SSRC(1), originalPayloadType: PayloadType(masking: 96)) == nil
            )
        }
    }

    @Test func unwrapNeedsAnOSN() {
        // A padding-only RTX packet (a probe) and one with a 1-byte payload.
        let probe: [UInt8] = [0xA0, 0x61, 0, 1, 0, 0, 0, 1, 0x55, 0x66, 0x77, 0x88, 0, 0, 0, 4]
        let oneByte: [UInt8] = [0x80, 0x61, 0, 1, 0, 0, 0, 1, 0x55, 0x66, 0x77, 0x88, 0x12]
        #expect(unwrap(probe) == nil)
        #expect(unwrap(oneByte) == nil)
    }

    @Test func paddingPacketIsAHeaderAndPaddingOnly() throws {
        var slot = [UInt8](repeating: 0xEE, count: 40)
        let length = slot.withUnsafeMutableBytes {
            RTXPacket.makePadding(
                in: $0, rtxSSRC: SSRC(0x5566_7788), sequenceNumber: 0xBEEF, payloadType: PayloadType(masking: 97),
                timestamp: 0x0102_0304, paddingBytes: 5)
        }
        #expect(length == 17)
        #expect(
            Array(slot[0..<17]) == [
                0xA0,  // V=2, P=1, X=0, CC=0
                0x61,  // M=0, PT=97
                0xBE, 0xEF,  // sequence number
                0x01, 0x02, 0x03, 0x04,  // timestamp
                0x55, 0x66, 0x77, 0x88,  // RTX SSRC
                0x00, 0x00, 0x00, 0x00, 0x05,  // padding, count last
            ])
        let header = try RTPHeader(parsing: Array(slot[0..<17]).span.bytes)
        #expect(header.payloadLength == 0)
        #expect(header.paddingLength == 5)
        #expect(slot[17] == 0xEE)
    }

    @Test func paddingPacketRefusesBadSizes() {
        var slot = [UInt8](repeating: 0, count: 267)
        slot.withUnsafeMutableBytes { raw in
            for bad in [0, 256, -1] {
                #expect(
                    RTXPacket.makePadding(
                        in: raw, rtxSSRC: SSRC(1), sequenceNumber: 1, payloadType: PayloadType(masking: 97), timestamp: 0,
                        paddingBytes: bad) == nil)
            }
            #expect(
                RTXPacket.makePadding(
                    in: raw, rtxSSRC: SSRC(1), sequenceNumber: 1, payloadType: PayloadType(masking: 97), timestamp: 0,
                    paddingBytes: 255) == 267)
            let small = UnsafeMutableRawBufferPointer(rebasing: raw[0..<12])
            #expect(
                RTXPacket.makePadding(
                    in: small, rtxSSRC: SSRC(1), sequenceNumber: 1, payloadType: PayloadType(masking: 97), timestamp: 0,
                    paddingBytes: 1) == nil)
        }
    }
}
