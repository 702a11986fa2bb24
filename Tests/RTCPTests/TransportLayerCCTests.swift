import RTCP
import Testing
import Wire

// Transport-wide feedback in the shape Chrome sends: a two-bit vector
// chunk, a run-length chunk, and the padding bit set with one byte of
// padding. (Field values as in pion/rtcp's captured example.)
let twccChromeFixture: [UInt8] = [
    0xAF, 0xCD, 0x00, 0x07,  // V=2 P=1 FMT=15, PT=205, length 7 (32 bytes)
    0x9B, 0x74, 0xF6, 0x1F,  // SSRC of packet sender
    0x93, 0x71, 0xDC, 0xBC,  // SSRC of media source
    0x85, 0x3C,  // base sequence number 34108
    0x00, 0x09,  // packet status count 9
    0x63, 0xF9, 0x16,  // reference time 6551830 (x 64 ms)
    0xB3,  // fb pkt count 179
    0xD5, 0x52,  // two-bit vector: S S S S S N L (S small, N not received, L large)
    0x00, 0x30,  // run-length: not received x 48 (2 of them used)
    0x9B, 0xAA, 0x6A, 0xAA, 0x7B,  // 5 small deltas: 155 170 106 170 123 (x 250 us)
    0x01, 0x09,  // 1 large delta: 265
    0x01,  // padding count 1
]

let twccChromeStatuses: [TransportCCStatus] = [
    .receivedSmallDelta(155), .receivedSmallDelta(170), .receivedSmallDelta(106), .receivedSmallDelta(170),
    .receivedSmallDelta(123), .notReceived, .receivedLargeDelta(265), .notReceived, .notReceived,
]

@Test func parsesChromeShapedTransportFeedback() throws {
    guard case .transportLayerCC(let cc) = try parseSingle(twccChromeFixture) else { Issue.record("not TWCC"); return }
    #expect(cc.senderSSRC == SSRC(2_608_133_663))
    #expect(cc.mediaSSRC == SSRC(2_473_712_828))
    #expect(cc.baseSequenceNumber == 34108)
    #expect(cc.referenceTime == 6_551_830)
    #expect(cc.feedbackPacketCount == 179)
    #expect(cc.statuses == twccChromeStatuses)
    let packets = cc.packets
    #expect(packets.map(\.sequenceNumber) == Array(34108...34116))
    #expect(packets[0].receiveDelta == .microseconds(38_750))
    #expect(packets[5].receiveDelta == nil)
    #expect(packets[6].receiveDelta == .microseconds(66_250))
    let reference = Duration.milliseconds(64) * 6_551_830
    #expect(packets[0].arrival == reference + .microseconds(38_750))
    #expect(packets[6].arrival == reference + .microseconds(247_250))  // 250 us x (155+170+106+170+123+265)
    #expect(packets[8].arrival == nil)
}

@Test func reencodesChromeFeedbackWithOwnChunks() throws {
    guard case .transportLayerCC(let cc) = try parseSingle(twccChromeFixture) else { Issue.record("not TWCC"); return }
    var expected = twccChromeFixture
    expected[0] = 0x8F  // no padding bit
    expected[22..<24] = [0x00, 0x02]  // run-length of exactly the 2 remaining
    expected[31] = 0x00  // zero padding inside the length instead
    #expect(cc.serialized() == expected)
    #expect(try roundTrip(.transportLayerCC(cc)) == .transportLayerCC(cc))
}

@Test func parsesNegativeReferenceTime() throws {
    let cc = TransportLayerCC(
        senderSSRC: SSRC(1), mediaSSRC: SSRC(2), baseSequenceNumber: 65535,
        referenceTime: -3, feedbackPacketCount: 0, statuses: [.receivedLargeDelta(-100), .receivedSmallDelta(0)])
    let bytes = cc.serialized()
    #expect(Array(bytes[16..<19]) == [0xFF, 0xFF, 0xFD])
    guard case .transportLayerCC(let parsed) = try roundTrip(.transportLayerCC(cc)) else { Issue.record("not TWCC"); return }
    #expect(parsed == cc)
    #expect(parsed.packets.map(\.sequenceNumber) == [65535, 0])
    #expect(parsed.packets[1].arrival == .milliseconds(-192) - .microseconds(25_000))
}

@Test func buildsFeedbackFromArrivals() {
    let ms: Int64 = 1_000_000
    let arrivals = [
        TransportCCArrival(sequenceNumber: 10, arrival: Instant(nanoseconds: 1000 * ms)),
        TransportCCArrival(sequenceNumber: 11, arrival: nil),
        TransportCCArrival(sequenceNumber: 12, arrival: Instant(nanoseconds: 1000 * ms + 600_000)),  // floors to 1000.5 ms
        TransportCCArrival(sequenceNumber: 14, arrival: Instant(nanoseconds: 1100 * ms)),  // 13 missing
        TransportCCArrival(sequenceNumber: 15, arrival: Instant(nanoseconds: 999 * ms)),  // reordered
    ]
    let (cc, consumed) = TransportLayerCC.build(
        senderSSRC: SSRC(1), mediaSSRC: SSRC(2), feedbackPacketCount: 7, arrivals: arrivals)
    #expect(consumed == 5)
    #expect(cc.baseSequenceNumber == 10)
    #expect(cc.referenceTime == 15)  // 15 x 64 ms = 960 ms
    #expect(cc.feedbackPacketCount == 7)
    #expect(
        cc.statuses == [
            .receivedSmallDelta(160), .notReceived, .receivedSmallDelta(2), .notReceived,
            .receivedLargeDelta(398), .receivedLargeDelta(-404),
        ])
    #expect(
        cc.packets.map(\.arrival) == [
            .milliseconds(1000), nil, .microseconds(1_000_500), nil,
            .milliseconds(1100), .milliseconds(999),
        ])
}

@Test func buildStopsBeforeDeltaThatDoesNotFit() {
    let arrivals = [
        TransportCCArrival(sequenceNumber: 65535, arrival: Instant(nanoseconds: 0)),
        TransportCCArrival(sequenceNumber: 0, arrival: Instant(nanoseconds: 8_000_000_000)),
        TransportCCArrival(sequenceNumber: 1, arrival: Instant(nanoseconds: 17_000_000_000)),
    ]
    let (cc, consumed) = TransportLayerCC.build(
        senderSSRC: SSRC(1), mediaSSRC: SSRC(2), feedbackPacketCount: 0, arrivals: arrivals)
    #expect(consumed == 2)
    #expect(cc.statuses == [.receivedSmallDelta(0), .receivedLargeDelta(32000)])
}

@Test func buildStopsAtDuplicateOrBackwardSequence() {
    let t = Instant(nanoseconds: 5_000_000)
    let arrivals = [
        TransportCCArrival(sequenceNumber: 5, arrival: t), TransportCCArrival(sequenceNumber: 6, arrival: t),
        TransportCCArrival(sequenceNumber: 6, arrival: t), TransportCCArrival(sequenceNumber: 7, arrival: t),
    ]
    let (cc, consumed) = TransportLayerCC.build(
        senderSSRC: SSRC(1), mediaSSRC: SSRC(2), feedbackPacketCount: 0, arrivals: arrivals)
    #expect(consumed == 2)
    #expect(cc.statuses.count == 2)
    let empty = TransportLayerCC.build(senderSSRC: SSRC(1), mediaSSRC: SSRC(2), feedbackPacketCount: 0, arrivals: [])
    #expect(empty.consumed == 0)
    #expect(empty.feedback.statuses == [])
}

/// The packet chunks of a serialized feedback, as 16-bit words.
func chunkWords(_ cc: TransportLayerCC, count: Int) -> [UInt16] {
    let bytes = cc.serialized()
    return (0..<count).map { UInt16(bytes[20 + 2 * $0]) << 8 | UInt16(bytes[21 + 2 * $0]) }
}

func feedback(_ statuses: [TransportCCStatus]) -> TransportLayerCC {
    TransportLayerCC(
        senderSSRC: SSRC(1), mediaSSRC: SSRC(2), baseSequenceNumber: 0, referenceTime: 0,
        feedbackPacketCount: 0, statuses: statuses)
}

@Test func choosesRunLengthForLongRuns() throws {
    let cc = feedback(Array(repeating: .receivedSmallDelta(4), count: 20))
    #expect(chunkWords(cc, count: 1) == [0x2014])
    let gap = feedback(Array(repeating: .notReceived, count: 1000) + [.receivedLargeDelta(-1)])
    #expect(chunkWords(gap, count: 2) == [0x03E8, 0x4001])
    #expect(try roundTrip(.transportLayerCC(gap)) == .transportLayerCC(gap))
    // Longer than one run-length chunk holds.
    let huge = feedback(Array(repeating: .notReceived, count: 9000) + [.receivedSmallDelta(1)])
    #expect(chunkWords(huge, count: 3) == [0x1FFF, 0x0329, 0x2001])
    #expect(try roundTrip(.transportLayerCC(huge)) == .transportLayerCC(huge))
}

@Test func choosesOneBitVectorForMixedSmallDeltas() throws {
    let statuses: [TransportCCStatus] = (0..<14).map { $0 % 2 == 0 ? .receivedSmallDelta(UInt8($0)) : .notReceived }
    let cc = feedback(statuses)
    #expect(chunkWords(cc, count: 1) == [0xAAAA])
    #expect(try roundTrip(.transportLayerCC(cc)) == .transportLayerCC(cc))
}

@Test func choosesTwoBitVectorWhenLargeDeltasAreNear() throws {
    let statuses: [TransportCCStatus] = [
        .receivedSmallDelta(1), .notReceived, .receivedSmallDelta(1),
        .notReceived, .receivedSmallDelta(1), .notReceived, .receivedSmallDelta(1),
        .notReceived, .receivedLargeDelta(1000), .notReceived,
    ]
    let cc = feedback(statuses)
    // 01 00 01 00 01 00 01 | then 00 10 00 (3 of 7 used)
    #expect(chunkWords(cc, count: 2) == [0xC000 | 0x1111, 0xC000 | 0x0800])
    #expect(try roundTrip(.transportLayerCC(cc)) == .transportLayerCC(cc))
}

@Test func transportFeedbackRoundTripsPseudoRandomStatuses() throws {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> UInt64 { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state }
    for _ in 0..<40 {
        let count = Int(next() % 300) + 1
        let statuses: [TransportCCStatus] = (0..<count).map { _ in
            switch next() % 10 {
            case 0..<4: .notReceived
            case 4..<9: .receivedSmallDelta(UInt8(truncatingIfNeeded: next()))
            default: .receivedLargeDelta(Int16(truncatingIfNeeded: next()))
            }
        }
        var cc = feedback(statuses)
        cc.baseSequenceNumber = UInt16(truncatingIfNeeded: next())
        cc.referenceTime = Int32(truncatingIfNeeded: next()) >> 8
        #expect(try roundTrip(.transportLayerCC(cc)) == .transportLayerCC(cc))
    }
}

@Test func rejectsStatusCountWithChunksBeyondThePacket() {
    // Status count 100, one one-bit vector chunk (14 statuses) and no more.
    let bytes: [UInt8] = [
        0x8F, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2,
        0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0x00,  // base 0, count 100, ref 0, fb 0
        0x80, 0x00, 0x00, 0x00,  // vector of 14 not-received, then 0x0000 = run of 0
    ]
    #expect(throws: RTCPParseError.countBeyondPacket) { try parseCompound(bytes) }
    // Status count 65535 with no chunk bytes at all: rejected before reading.
    let none: [UInt8] = [0x8F, 0xCD, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x00, 0xFF, 0xFF, 0, 0, 0, 0]
    #expect(throws: RTCPParseError.countBeyondPacket) { try parseCompound(none) }
}

@Test func rejectsDeltasBeyondThePacket() {
    let bytes: [UInt8] = [
        0x8F, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2,
        0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00,  // base 0, count 4
        0x20, 0x04,  // run-length: small delta x 4
        0x10, 0x10,  // only 2 of the 4 deltas
    ]
    #expect(throws: RTCPParseError.truncated) { try parseCompound(bytes) }
}

@Test func rejectsReservedStatusSymbol() {
    let bytes: [UInt8] = [
        0x8F, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x60, 0x01, 0x00, 0x00,  // run-length of symbol 3
    ]
    #expect(throws: RTCPParseError.reservedStatusSymbol) { try parseCompound(bytes) }
}

@Test func ignoresVectorSlotsBeyondStatusCount() throws {
    let bytes: [UInt8] = [
        0x8F, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2,
        0x00, 0x05, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00,  // base 5, count 1, ref 1
        0xFF, 0xFF, 0x07, 0x00,  // two-bit vector of symbol 3 (reserved), delta 7, pad
    ]
    // First symbol is 3 (reserved): rejected even in a vector.
    #expect(throws: RTCPParseError.reservedStatusSymbol) { try parseCompound(bytes) }
    var used = bytes
    used[20] = 0xDF  // 11 01 11 11 ...: first symbol 1, the rest unused
    guard case .transportLayerCC(let cc) = try parseSingle(used) else { Issue.record("not TWCC"); return }
    #expect(cc.statuses == [.receivedSmallDelta(7)])
    #expect(cc.referenceTime == 1)
}
