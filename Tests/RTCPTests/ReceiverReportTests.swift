import RTCP
import Testing
import Wire

@Test func parsesEmptyReceiverReport() throws {
    // What a peer with nothing to report sends first in a compound.
    let bytes: [UInt8] = [0x80, 0xC9, 0x00, 0x01, 0x00, 0x00, 0x00, 0x2A]
    #expect(try parseSingle(bytes) == .receiverReport(ReceiverReport(ssrc: SSRC(42))))
    #expect(ReceiverReport(ssrc: SSRC(42)).serialized() == bytes)
}

@Test func receiverReportRoundTrips() throws {
    let rr = ReceiverReport(
        ssrc: SSRC(0xDEAD_BEEF),
        reports: (0..<31).map {
            ReceptionReport(
                ssrc: SSRC(UInt32($0)), fractionLost: UInt8($0), cumulativeLost: Int32($0) - 15,
                extendedHighestSequenceNumber: UInt32($0) * 1000, jitter: 1, lastSenderReport: 2,
                delaySinceLastSenderReport: 3)
        })
    #expect(try roundTrip(.receiverReport(rr)) == .receiverReport(rr))
}

@Test func rejectsReceiverReportCountBeyondThePacket() {
    // RC=2 with one 24-byte block present.
    var bytes: [UInt8] = [0x82, 0xC9, 0x00, 0x07, 0, 0, 0, 1]
    bytes += [UInt8](repeating: 0, count: 24)
    #expect(throws: RTCPParseError.countBeyondPacket) { try parseCompound(bytes) }
}
