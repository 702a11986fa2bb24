import BotMedia
import Testing
import Wire

private func units(_ stream: [UInt8]) -> [[UInt8]] {
    var cursor = AnnexBNALUnits()
    var out: [[UInt8]] = []
    let span = stream.span.bytes
    while let r = cursor.next(in: span) { out.append(Array(stream[r])) }
    return out
}

@Test func annexBSplitsAtFourAndThreeByteStartCodes() {
    let stream: [UInt8] = [
        0x00, 0x00, 0x00, 0x01, 0x67, 0x42, 0xE0, 0x1F,  // 4-byte start code, SPS
        0x00, 0x00, 0x01, 0x68, 0xCE, 0x3C, 0x80,  // 3-byte start code, PPS
        0x00, 0x00, 0x00, 0x01, 0x65, 0x88, 0x84,  // 4-byte start code, IDR slice
    ]
    #expect(
        units(stream) == [[0x67, 0x42, 0xE0, 0x1F], [0x68, 0xCE, 0x3C, 0x80], [0x65, 0x88, 0x84]])
}

@Test func annexBLeavesEmulationPreventionBytesInTheUnit() {
    // 00 00 03 is emulation prevention (H.264 section 7.4.1): part of the
    // unit, and RTP carries it as it is (RFC 6184 section 1.3).
    let stream: [UInt8] = [0x00, 0x00, 0x01, 0x41, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x03, 0x00, 0x9A]
    #expect(units(stream) == [[0x41, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x03, 0x00, 0x9A]])
}

@Test func annexBDropsTrailingZerosLeadingBytesAndEmptyUnits() {
    let stream: [UInt8] = [
        0xFF, 0x12,  // before the first start code: not a unit
        0x00, 0x00, 0x01, 0x09, 0xF0, 0x00, 0x00,  // AUD, then trailing_zero_8bits
        0x00, 0x00, 0x01,  // empty unit
        0x00, 0x00, 0x00, 0x01, 0x41, 0x9A, 0x00,  // P slice, one trailing zero at the end
    ]
    #expect(units(stream) == [[0x09, 0xF0], [0x41, 0x9A]])
    #expect(units([]) == [])
    #expect(units([0x00, 0x00]) == [])
    #expect(units([0x00, 0x00, 0x01]) == [])
}
