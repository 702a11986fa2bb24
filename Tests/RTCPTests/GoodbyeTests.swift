import RTCP
import Testing
import Wire

@Test func parsesGoodbyeWithReason() throws {
    let bytes: [UInt8] = [
        0x81, 0xCB, 0x00, 0x02,  // SC=1, PT=203, length 2 (12 bytes)
        0x12, 0x34, 0x56, 0x78,  // SSRC
        0x03, 0x62, 0x79, 0x65,  // reason length 3, "bye"
    ]
    let expected = Goodbye(sources: [SSRC(0x1234_5678)], reasonText: "bye")
    #expect(try parseSingle(bytes) == .goodbye(expected))
    #expect(expected.serialized() == bytes)
    #expect(expected.reasonText == "bye")
}

@Test func goodbyeRoundTripsWithAndWithoutReason() throws {
    let plain = Goodbye(sources: [SSRC(1), SSRC(2), SSRC(3)])
    #expect(try roundTrip(.goodbye(plain)) == .goodbye(plain))
    #expect(plain.serialized().count == 16)
    let long = Goodbye(sources: [], reasonText: "going away now")
    #expect(try roundTrip(.goodbye(long)) == .goodbye(long))
}

@Test func rejectsGoodbyeReasonLengthBeyondThePacket() {
    let bytes: [UInt8] = [0x81, 0xCB, 0x00, 0x02, 0, 0, 0, 1, 0x0A, 0x62, 0x79, 0x65]
    #expect(throws: RTCPParseError.truncated) { try parseCompound(bytes) }
}

@Test func rejectsGoodbyeSourceCountBeyondThePacket() {
    let bytes: [UInt8] = [0x82, 0xCB, 0x00, 0x01, 0, 0, 0, 1]
    #expect(throws: RTCPParseError.countBeyondPacket) { try parseCompound(bytes) }
}
