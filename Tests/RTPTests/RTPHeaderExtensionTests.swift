import Testing
import Wire

@testable import RTP

/// Collects (id, value) pairs through the allocation-free cursor, for
/// assertions.
func elements(of packet: [UInt8]) throws -> [(UInt8, [UInt8])] {
    let h = try parse(packet)
    let bytes = packet.span.bytes
    guard let ext = h.headerExtension else { return [] }
    var cursor = ext.elements()
    var out: [(UInt8, [UInt8])] = []
    while let e = cursor.next(in: bytes) { out.append((e.id, Array(packet[e.valueRange]))) }
    return out
}

@Suite struct RTPHeaderExtensionTests {
    let fixed: [UInt8] = [0x90, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]  // V=2 X=1

    @Test func walksOneByteElementsSkippingPadding() throws {
        let packet =
            fixed + [
                0xBE, 0xDE, 0x00, 0x03,  // profile, 3 words
                0x10, 0xAB,  // id 1, len 1
                0x00,  // padding byte
                0x31, 0x01, 0x02,  // id 3, len 2: transport-wide seq 0x0102
                0x22, 0xAA, 0xBB, 0xCC,  // id 2, len 3: abs-send-time
                0x00, 0x00,  // padding
                0x99,  // payload
            ]
        let h = try parse(packet)
        #expect(h.headerExtension?.form == .oneByte)
        #expect(h.headerExtension?.dataRange == 16..<28)
        #expect(h.headerExtension?.headerOffset == 12)
        #expect(h.payloadRange == 28..<29)
        let all = try elements(of: packet)
        #expect(all.map(\.0) == [1, 3, 2])
        #expect(all.map(\.1) == [[0xAB], [0x01, 0x02], [0xAA, 0xBB, 0xCC]])
        #expect(h.extensionValueRange(id: 3, in: packet) == 20..<22)
        #expect(h.extensionValueRange(id: 4, in: packet) == nil)
    }

    @Test func oneByteID15StopsParsing() throws {
        let packet =
            fixed + [
                0xBE, 0xDE, 0x00, 0x02,
                0x10, 0xAB,  // id 1
                0xF5,  // id 15: stop, its length is ignored
                0x20, 0xCD, 0x00, 0x00, 0x00,  // would be id 2
            ]
        let all = try elements(of: packet)
        #expect(all.map(\.0) == [1])
        #expect(try parse(packet).extensionValueRange(id: 2, in: packet) == nil)
    }

    @Test func walksTwoByteElementsWithAppBitsAndEmptyValue() throws {
        let packet =
            fixed + [
                0x10, 0x05, 0x00, 0x02,  // two-byte profile, appbits 5, 2 words
                0x01, 0x00,  // id 1, len 0
                0x00,  // padding
                0x20, 0x02, 0xEE, 0xFF,  // id 32, len 2
                0x00,
            ]
        let h = try parse(packet)
        #expect(h.headerExtension?.form == .twoByte(appBits: 5))
        let all = try elements(of: packet)
        #expect(all.map(\.0) == [1, 32])
        #expect(all.map(\.1) == [[], [0xEE, 0xFF]])
    }

    @Test func keepsOtherProfilesOpaque() throws {
        let packet = fixed + [0xAB, 0xCD, 0x00, 0x01, 0x10, 0xFF, 0xFF, 0xFF]
        let h = try parse(packet)
        #expect(h.headerExtension?.form == .opaque(profile: 0xABCD))
        #expect(h.headerExtension?.dataRange == 16..<20)
        #expect(try elements(of: packet).isEmpty)
        #expect(h.extensionValueRange(id: 1, in: packet) == nil)
    }

    @Test func acceptsEmptyExtensionBlock() throws {
        let h = try parse(fixed + [0xBE, 0xDE, 0x00, 0x00, 0x42])
        #expect(h.headerExtension?.dataRange == 16..<16)
        #expect(h.payloadRange == 16..<17)
    }

    @Test func rejectsOneByteElementLengthBeyondBlock() {
        // id 1 with len field 15 (16 bytes) in a 4-byte block, followed by
        // payload bytes that must not be mistaken for the value.
        let packet = fixed + [0xBE, 0xDE, 0x00, 0x01, 0x1F, 0x00, 0x00, 0x00] + [UInt8](repeating: 0x77, count: 20)
        #expect(throws: RTPParseError.malformedExtension) { try parse(packet) }
    }

    @Test func rejectsTwoByteElementLengthBeyondBlock() {
        let packet = fixed + [0x10, 0x00, 0x00, 0x01, 0x01, 0x03, 0xAA, 0xBB] + [0x77, 0x77]
        #expect(throws: RTPParseError.malformedExtension) { try parse(packet) }
    }

    @Test func rejectsTwoByteElementHeaderSplitByBlockEnd() {
        let packet = fixed + [0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05]
        #expect(throws: RTPParseError.malformedExtension) { try parse(packet) }
    }

    @Test func readsValueAsSpanAndIdentifiers() throws {
        let packet =
            fixed + [
                0xBE, 0xDE, 0x00, 0x02,
                0x10, 0x30,  // id 1 (mid), "0"
                0x21, 0x68, 0x69,  // id 2 (rid), "hi"
                0x00, 0x00, 0x00,
            ]
        let h = try parse(packet)
        #expect(h.mid(id: 1, in: packet) == MID("0"))
        #expect(h.rid(id: 2, in: packet) == RID("hi"))
        #expect(h.rid(id: 3, in: packet) == nil)
        #expect(h.extensionValueBytes(id: 2, in: packet) == [0x68, 0x69])
    }
}
