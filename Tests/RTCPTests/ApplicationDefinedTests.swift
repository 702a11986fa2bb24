import RTCP
import Testing
import Wire

@Test func parsesApplicationDefinedPacket() throws {
    let bytes: [UInt8] = [
        0x81, 0xCC, 0x00, 0x03,  // subtype 1, PT=204, length 3 (16 bytes)
        0x00, 0x00, 0x30, 0x39,  // SSRC 12345
        0x54, 0x45, 0x53, 0x54,  // name "TEST"
        0xDE, 0xAD, 0xBE, 0xEF,  // data
    ]
    let expected = try #require(ApplicationDefined(subtype: 1, ssrc: SSRC(12345), name: "TEST", data: [0xDE, 0xAD, 0xBE, 0xEF]))
    #expect(expected.name == 0x5445_5354)
    #expect(try parseSingle(bytes) == .applicationDefined(expected))
    #expect(expected.serialized() == bytes)
}

@Test func applicationDefinedRoundTripsEmptyData() throws {
    let app = ApplicationDefined(subtype: 31, ssrc: SSRC(9), name: 0x4142_4344, data: [])
    #expect(try roundTrip(.applicationDefined(app)) == .applicationDefined(app))
    #expect(ApplicationDefined(subtype: 0, ssrc: SSRC(1), name: "TOOLONG", data: []) == nil)
}

@Test func rejectsApplicationDefinedWithoutName() {
    #expect(throws: RTCPParseError.truncated) { try parseCompound([0x80, 0xCC, 0x00, 0x01, 0, 0, 0, 1]) }
}
