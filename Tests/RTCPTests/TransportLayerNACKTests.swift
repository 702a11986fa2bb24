import RTCP
import Testing
import Wire

@Test func parsesGenericNACK() throws {
    let bytes: [UInt8] = [
        0x81, 0xCD, 0x00, 0x03,  // FMT=1, PT=205, length 3 (16 bytes)
        0x00, 0x00, 0x00, 0x01,  // SSRC of packet sender
        0x4B, 0x1D, 0x2C, 0x3A,  // SSRC of media source
        0x04, 0xD2, 0x00, 0x05,  // PID 1234, BLP 0b101: 1235 and 1237 lost too
    ]
    let expected = TransportLayerNACK(
        senderSSRC: SSRC(1), mediaSSRC: SSRC(0x4B1D_2C3A),
        pairs: [NACKPair(packetID: 1234, lostPackets: 5)])
    #expect(try parseSingle(bytes) == .transportLayerNACK(expected))
    #expect(expected.lostSequenceNumbers == [1234, 1235, 1237])
    #expect(expected.serialized() == bytes)
}

@Test func buildsMinimalPairsFromSequenceNumbers() {
    #expect(TransportLayerNACK.pairs(covering: [1237, 1234, 1235]) == [NACKPair(packetID: 1234, lostPackets: 5)])
    // 17 is PID + 16, the last bit; 18 needs a second pair.
    #expect(
        TransportLayerNACK.pairs(covering: [1, 17, 18]) == [
            NACKPair(packetID: 1, lostPackets: 0x8000),
            NACKPair(packetID: 18),
        ])
    #expect(TransportLayerNACK.pairs(covering: []) == [])
    #expect(TransportLayerNACK.pairs(covering: [9, 9, 9]) == [NACKPair(packetID: 9)])
}

@Test func nackPairsSpanTheSequenceWrap() {
    let pairs = TransportLayerNACK.pairs(covering: [0, 1, 65534, 65535])
    #expect(pairs == [NACKPair(packetID: 65534, lostPackets: 0b111)])
    #expect(pairs[0].lostSequenceNumbers == [65534, 65535, 0, 1])
}

@Test func nackExpansionRoundTripsArbitrarySets() throws {
    var state: UInt32 = 0x1234_5678
    for _ in 0..<50 {
        var lost = Set<UInt16>()
        for _ in 0..<40 {
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            lost.insert(UInt16(truncatingIfNeeded: state % 200) &+ 65450)
        }
        let nack = TransportLayerNACK(senderSSRC: SSRC(1), mediaSSRC: SSRC(2), lostSequenceNumbers: lost)
        #expect(Set(nack.lostSequenceNumbers) == lost)
        #expect(nack.lostSequenceNumbers.count == lost.count)
        #expect(try roundTrip(.transportLayerNACK(nack)) == .transportLayerNACK(nack))
    }
}

@Test func rejectsNACKWithoutFCI() {
    let bytes: [UInt8] = [0x81, 0xCD, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2]
    #expect(throws: RTCPParseError.missingFCI) { try parseCompound(bytes) }
}

@Test func rejectsNACKWithoutMediaSSRC() {
    #expect(throws: RTCPParseError.truncated) { try parseCompound([0x81, 0xCD, 0x00, 0x01, 0, 0, 0, 1]) }
}
