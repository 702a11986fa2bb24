import BotMedia
import RTP
import Testing
import Wire

/// Packetizes one access unit; returns the packets.
private func packets(_ stream: [UInt8], maxPayloadSize: Int, timestamp: UInt32 = 0x1234_5678) throws -> [[UInt8]] {
    var packetizer = try H264Packetizer(
        ssrc: SSRC(0xAABB_CCDD), payloadType: PayloadType(masking: 102), maxPayloadSize: maxPayloadSize,
        initialSequenceNumber: 0xFFFF)
    var out: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0, count: 1500)
    var twcc: UInt16 = 0
    let frame = EncodedFrame(bytes: stream, isKeyframe: true, duration: .milliseconds(33))
    try buffer.withUnsafeMutableBytes { raw in
        try packetizer.packetize(frame, rtpTimestamp: timestamp, captureTime: nil, transportSequenceNumber: &twcc, into: raw) {
            out.append(Array(raw[0..<$0]))
        }
    }
    #expect(packetizer.sequenceNumber == UInt16(truncatingIfNeeded: 0xFFFF + out.count))
    return out
}

private let sps: [UInt8] = [0x67, 0x42, 0xE0, 0x1F, 0xDA]
private let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
private let start4: [UInt8] = [0, 0, 0, 1]

@Test func smallUnitsBeforeAnIDRGoInOneSTAPA() throws {
    let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x00, 0x03, 0x01]  // keeps its emulation prevention
    let out = try packets(start4 + sps + [0, 0, 1] + pps + start4 + idr, maxPayloadSize: 100)
    #expect(out.count == 1)
    #expect(
        out[0] == [
            0x80, 0xE6, 0xFF, 0xFF,  // V=2, marker, PT 102, sequence 65535
            0x12, 0x34, 0x56, 0x78, 0xAA, 0xBB, 0xCC, 0xDD,  // timestamp, SSRC
            0x78,  // STAP-A: F=0, NRI=3 (the highest), type 24
            0x00, 0x05, 0x67, 0x42, 0xE0, 0x1F, 0xDA,  // size 5, SPS
            0x00, 0x04, 0x68, 0xCE, 0x3C, 0x80,  // size 4, PPS
            0x00, 0x07, 0x65, 0x88, 0x84, 0x00, 0x00, 0x03, 0x01,  // size 7, IDR
        ])
}

@Test func aLargeUnitIsSplitIntoFUAFragments() throws {
    // A P slice (NRI 2, type 1) of 1 + 10 bytes at 6 bytes of payload: 10
    // bytes in pieces of at most 4 are 3 pieces of 4, 3 and 3.
    let slice: [UInt8] = [0x41] + Array(0xA0...0xA9)
    let out = try packets(start4 + slice, maxPayloadSize: 6)
    #expect(
        out.map { Array($0[12...]) } == [
            [0x5C, 0x81, 0xA0, 0xA1, 0xA2, 0xA3],  // FU indicator NRI 2 type 28; S, type 1
            [0x5C, 0x01, 0xA4, 0xA5, 0xA6],
            [0x5C, 0x41, 0xA7, 0xA8, 0xA9],  // E
        ])
    #expect(out.map { $0[1] & 0x80 != 0 } == [false, false, true])  // marker on the last only
    #expect(out.map { Array($0[2...3]) } == [[0xFF, 0xFF], [0x00, 0x00], [0x00, 0x01]])  // wraps
    #expect(out.allSatisfy { Array($0[4...7]) == [0x12, 0x34, 0x56, 0x78] })
}

@Test func unitsThatFitAloneGoAsSingleNALUnitPackets() throws {
    // Two 8-byte units at 10 bytes of payload: together (1 + 2 + 8 + 2 + 8)
    // they do not fit a STAP-A; each fits as a single NAL unit.
    let a: [UInt8] = [0x06, 1, 2, 3, 4, 5, 6, 7]  // SEI
    let b: [UInt8] = [0x41, 9, 8, 7, 6, 5, 4, 3]
    let out = try packets(start4 + a + start4 + b, maxPayloadSize: 10)
    #expect(out.map { Array($0[12...]) } == [a, b])
    #expect(out.map { $0[1] & 0x80 != 0 } == [false, true])
}

@Test func aSTAPAFollowedByFragmentsMarksOnlyTheLastFragment() throws {
    let idr: [UInt8] = [0x65] + Array(repeating: 0x11, count: 20)
    let out = try packets(start4 + sps + start4 + pps + start4 + idr, maxPayloadSize: 16)
    #expect(out.count == 3)  // STAP-A (SPS, PPS), then the IDR in two fragments of 10
    #expect(out[0][12] == 0x78 && out[0].count == 12 + 1 + 7 + 6)
    #expect(Array(out[1][12...13]) == [0x7C, 0x85] && out[1].count == 12 + 12)
    #expect(Array(out[2][12...13]) == [0x7C, 0x45] && out[2].count == 12 + 12)
    #expect(out.map { $0[1] & 0x80 != 0 } == [false, false, true])
}

@Test func packetizerRefusesASmallBufferAndAnEmptyFrame() throws {
    var packetizer = try H264Packetizer(ssrc: SSRC(1), payloadType: PayloadType(masking: 102))
    var buffer = [UInt8](repeating: 0, count: 100)
    var twcc: UInt16 = 0
    var emitted = 0
    // 3000 bytes after the header: three fragments of 2 + 1000 bytes.
    let big = EncodedFrame(bytes: start4 + [0x65] + Array(repeating: 7, count: 3000), isKeyframe: true, duration: .zero)
    #expect(throws: BotMediaError.bufferTooSmall(needed: 12 + 2 + 1000)) {
        try buffer.withUnsafeMutableBytes { raw in
            try packetizer.packetize(big, rtpTimestamp: 0, captureTime: nil, transportSequenceNumber: &twcc, into: raw) {
                _ in emitted += 1
            }
        }
    }
    let empty = EncodedFrame(bytes: [0, 0, 0, 1], isKeyframe: false, duration: .zero)
    #expect(throws: BotMediaError.invalidParameter) {
        try buffer.withUnsafeMutableBytes { raw in
            try packetizer.packetize(empty, rtpTimestamp: 0, captureTime: nil, transportSequenceNumber: &twcc, into: raw) {
                _ in emitted += 1
            }
        }
    }
    #expect(emitted == 0)
    #expect(throws: BotMediaError.invalidParameter) {
        try H264Packetizer(ssrc: SSRC(1), payloadType: PayloadType(masking: 102), maxPayloadSize: 2)
    }
}
