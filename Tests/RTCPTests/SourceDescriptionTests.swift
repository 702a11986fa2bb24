import RTCP
import Testing
import Wire

@Test func parsesMultipleChunksAndItems() throws {
    let bytes: [UInt8] = [
        0x82, 0xCA, 0x00, 0x07,  // SC=2, PT=202, length 7 (32 bytes)
        0x00, 0x00, 0x00, 0x01,  // chunk 1 SSRC
        0x01, 0x03, 0x61, 0x62, 0x63,  // CNAME "abc"
        0x06, 0x02, 0x74, 0x6F,  // TOOL "to"
        0x00, 0x00, 0x00,  // end + pad (9 + 4 = 13 -> 16)
        0x00, 0x00, 0x00, 0x02,  // chunk 2 SSRC
        0x01, 0x04, 0x77, 0x78, 0x79, 0x7A,  // CNAME "wxyz"
        0x00, 0x00,  // end + pad
    ]
    let expected = SourceDescription(chunks: [
        SDESChunk(source: SSRC(1), items: [SDESItem(type: .cname, text: "abc"), SDESItem(type: .tool, text: "to")]),
        SDESChunk(source: SSRC(2), items: [SDESItem(type: .cname, text: "wxyz")]),
    ])
    #expect(try parseSingle(bytes) == .sourceDescription(expected))
    #expect(expected.serialized() == bytes)
    #expect(expected.chunks[1].cname == "wxyz")
}

@Test func chunkWhoseItemsFillAWordGetsAFullWordOfZeros() throws {
    // SSRC + item of 2 + 4 bytes ends on a boundary: the terminator needs a
    // whole extra word.
    let sdes = SourceDescription(chunks: [SDESChunk(source: SSRC(7), items: [SDESItem(type: .cname, text: "abcdef")])])
    let bytes = sdes.serialized()
    #expect(bytes.count == 4 + 4 + 8 + 4)
    #expect(bytes.suffix(4) == [0, 0, 0, 0])
    let emptyChunk = SourceDescription(chunks: [SDESChunk(source: SSRC(7), items: [])])
    #expect(emptyChunk.serialized() == [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 7, 0, 0, 0, 0])
    #expect(try roundTrip(.sourceDescription(sdes)) == .sourceDescription(sdes))
    #expect(try roundTrip(.sourceDescription(emptyChunk)) == .sourceDescription(emptyChunk))
}

@Test func sdesRoundTripsPrivAndLongValues() throws {
    let sdes = SourceDescription(chunks: [
        SDESChunk(
            source: SSRC(1),
            items: [
                SDESItem(type: .priv, value: [3, 0x61, 0x62, 0x63, 0x01]),
                SDESItem(type: .note, value: [UInt8](repeating: 0x41, count: 255)),
            ]),
        SDESChunk(source: SSRC(2), items: [SDESItem(type: .email, text: "a@b")]),
    ])
    #expect(try roundTrip(.sourceDescription(sdes)) == .sourceDescription(sdes))
}

@Test func rejectsSDESItemLengthBeyondTheChunk() {
    let bytes: [UInt8] = [
        0x81, 0xCA, 0x00, 0x02,  // SC=1, length 2
        0x00, 0x00, 0x00, 0x01,  // SSRC
        0x01, 0x14, 0x61, 0x62,  // CNAME claiming 20 bytes, 2 present
    ]
    #expect(throws: RTCPParseError.truncated) { try parseCompound(bytes) }
}

@Test func rejectsSDESChunkWithoutTerminator() {
    let bytes: [UInt8] = [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 0x01, 0x02, 0x61, 0x62]
    #expect(throws: RTCPParseError.truncated) { try parseCompound(bytes) }
}

@Test func rejectsSDESSourceCountBeyondThePacket() {
    // SC=3 but room for one chunk.
    let bytes: [UInt8] = [0x83, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 0]
    #expect(throws: RTCPParseError.countBeyondPacket) { try parseCompound(bytes) }
}

@Test func boundsSDESItemsPerPacket() {
    let many = SourceDescription(chunks: [
        SDESChunk(
            source: SSRC(1),
            items: Array(
                repeating: SDESItem(type: .note, value: []), count: SourceDescription.maximumItems + 1))
    ])
    #expect(throws: RTCPParseError.tooManyItems) { try parseCompound(many.serialized()) }
    var atLimit = many
    atLimit.chunks[0].items.removeLast()
    #expect(throws: Never.self) { try parseCompound(atLimit.serialized()) }
}
