import RTCP
import Testing
import Wire

// An SR as a sending browser emits it with no report blocks.
let senderReportFixture: [UInt8] = [
    0x80, 0xC8, 0x00, 0x06,  // V=2 P=0 RC=0, PT=200, length 6 (28 bytes)
    0x5C, 0x9C, 0x2C, 0x07,  // SSRC of sender
    0xE9, 0x4F, 0x6A, 0x2B,  // NTP seconds
    0x40, 0x00, 0x00, 0x00,  // NTP fraction (0.25 s)
    0x00, 0x12, 0xD6, 0x87,  // RTP timestamp 1234567
    0x00, 0x00, 0x03, 0xE8,  // packet count 1000
    0x00, 0x0F, 0x42, 0x40,  // octet count 1000000
]

@Test func parsesSenderReportFields() throws {
    let expected = SenderReport(
        ssrc: SSRC(0x5C9C_2C07),
        senderInfo: SenderInfo(
            ntpTimestamp: 0xE94F_6A2B_4000_0000, rtpTimestamp: 1_234_567, packetCount: 1000, octetCount: 1_000_000))
    #expect(try parseSingle(senderReportFixture) == .senderReport(expected))
    #expect(expected.senderInfo.compactNTP == 0x6A2B_4000)
    #expect(expected.serialized() == senderReportFixture)
}

@Test func senderReportKeepsProfileExtensionAsARange() throws {
    let bytes: [UInt8] = [
        0x81, 0xC8, 0x00, 0x0D,  // RC=1, length 13 (56 bytes)
        0, 0, 0, 9,  // SSRC
        0, 0, 0, 1, 0, 0, 0, 2,  // NTP
        0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5,  // RTP ts, packets, octets
        0, 0, 0, 7,  // report block SSRC
        0x80, 0xFF, 0xFF, 0xFE,  // fraction 128, cumulative lost -2 (duplicates)
        0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0, 10, 0, 0, 0, 11,
        0xCA, 0xFE, 0xBA, 0xBE,  // profile-specific extension (4 bytes)
    ]
    guard case .senderReport(let sr) = try parseSingle(bytes) else { Issue.record("not SR"); return }
    #expect(sr.reports.count == 1)
    #expect(sr.reports[0].fractionLost == 128)
    #expect(sr.reports[0].cumulativeLost == -2)
    #expect(sr.reports[0].delaySinceLastSenderReport == 11)
    #expect(sr.profileExtension == 52..<56)
    #expect(sr.serialized(profileExtension: [0xCA, 0xFE, 0xBA, 0xBE]) == bytes)
}

@Test func senderReportRoundTripsWithReportsAndExtension() throws {
    let sr = SenderReport(
        ssrc: SSRC(1), senderInfo: SenderInfo(ntpTimestamp: 42, rtpTimestamp: 43, packetCount: 44, octetCount: 45),
        reports: [
            ReceptionReport(
                ssrc: SSRC(2), fractionLost: 3, cumulativeLost: -(1 << 23),
                extendedHighestSequenceNumber: 70000, jitter: 5,
                lastSenderReport: 6, delaySinceLastSenderReport: 7),
            ReceptionReport(ssrc: SSRC(3), cumulativeLost: (1 << 23) - 1),
        ],
        profileExtensionLength: 6)
    #expect(sr.profileExtension == 76..<84)
    var writer = ByteWriter()
    sr.serialize(into: &writer, profileExtension: [1, 2, 3, 4, 5, 6])
    #expect(writer.bytes.count == 84)
    #expect(try parseSingle(writer.bytes) == .senderReport(sr))
}

@Test func clampsCumulativeLostToTwentyFourBits() throws {
    let rr = ReceiverReport(
        ssrc: SSRC(1),
        reports: [
            ReceptionReport(ssrc: SSRC(2), cumulativeLost: 10_000_000),
            ReceptionReport(ssrc: SSRC(3), cumulativeLost: -10_000_000),
        ])
    guard case .receiverReport(let parsed) = try roundTrip(.receiverReport(rr)) else { Issue.record("not RR"); return }
    #expect(parsed.reports.map(\.cumulativeLost) == [8_388_607, -8_388_608])
}

@Test func rejectsSenderReportWithLengthZero() {
    #expect(throws: RTCPParseError.truncated) { try parseCompound([0x80, 0xC8, 0x00, 0x00]) }
}

@Test func rejectsSenderReportTruncatedInsideSenderInfo() {
    #expect(throws: RTCPParseError.truncated) { try parseCompound([0x80, 0xC8, 0x00, 0x01, 0, 0, 0, 1]) }
    var short = Array(senderReportFixture.prefix(24))
    short[3] = 0x05
    #expect(throws: RTCPParseError.truncated) { try parseCompound(short) }
}

@Test func rejectsReportCountBeyondThePacket() {
    var bytes = senderReportFixture
    bytes[0] = 0x81  // RC=1 but no report block present
    #expect(throws: RTCPParseError.countBeyondPacket) { try parseCompound(bytes) }
}
