import Testing
import Wire

struct Short: Error, Equatable {}

@Suite struct ByteReaderTests {
    @Test func readsBigEndianFields() throws {
        let bytes: [UInt8] = [
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12,
        ]
        var r = ByteReader(bytes.span.bytes)
        #expect(try r.uint8(or: Short()) == 0x01)
        #expect(try r.uint16(or: Short()) == 0x0203)
        #expect(try r.uint24(or: Short()) == 0x040506)
        #expect(try r.uint32(or: Short()) == 0x0708090A)
        #expect(try r.uint64(or: Short()) == 0x0B0C0D0E0F101112)
        let atEnd = r.isAtEnd
        #expect(atEnd)
    }

    @Test func reportsShortfallWithoutConsuming() {
        let bytes: [UInt8] = [0xAA, 0xBB, 0xCC]
        var r = ByteReader(bytes.span.bytes)
        #expect(throws: Short.self) { try r.uint32(or: Short()) }
        #expect(r.offset == 0)
        #expect(throws: Short.self) { try r.skip(4, or: Short()) }
        #expect(throws: Short.self) { try r.skip(-1, or: Short()) }
        #expect(throws: Short.self) { _ = try r.bytesArray(-5, or: Short()) }
        #expect(throws: Short.self) { _ = try r.uint64(or: Short()) }
        #expect(r.remaining == 3)
    }

    @Test func subReaderIsConfinedToItsLength() throws {
        let bytes: [UInt8] = [0x00, 0x02, 0xAA, 0xBB, 0xCC, 0xDD]
        var r = ByteReader(bytes.span.bytes)
        let length = Int(try r.uint16(or: Short()))
        var inner = try r.subReader(length, or: Short())
        #expect(try inner.uint16(or: Short()) == 0xAABB)
        #expect(throws: Short.self) { try inner.uint8(or: Short()) }
        #expect(try r.uint16(or: Short()) == 0xCCDD)
    }

    @Test func peekDoesNotAdvance() throws {
        let bytes: [UInt8] = [7, 8]
        var r = ByteReader(bytes.span.bytes)
        #expect(r.peekUInt8() == 7)
        #expect(r.peekUInt8(at: 1) == 8)
        #expect(r.peekUInt8(at: 2) == nil)
        #expect(r.peekUInt8(at: -1) == nil)
        _ = try r.uint8(or: Short())
        #expect(r.peekUInt8() == 8)
    }

    @Test func emptyInputIsAtEnd() {
        let bytes: [UInt8] = []
        var r = ByteReader(bytes.span.bytes)
        let atEnd = r.isAtEnd
        #expect(atEnd)
        #expect(throws: Short.self) { try r.uint8(or: Short()) }
    }
}

@Suite struct ByteWriterTests {
    @Test func writesBigEndianAndPatches() {
        var w = ByteWriter()
        w.uint8(1); w.uint16(0x0203); w.uint24(0x040506); w.uint32(0x0708090A)
        w.pad(to: 4)
        #expect(w.bytes == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 0])
        w.set(uint16: 0xBEEF, at: 1)
        #expect(Array(w.bytes[1...2]) == [0xBE, 0xEF])
    }
}

@Suite struct MutableBytesTests {
    @Test func storesInPlaceAndRefusesOutOfBounds() {
        var packet: [UInt8] = [0, 0, 0, 0, 0, 0]
        packet.withUnsafeMutableBytes { raw in
            let m = MutableBytes(raw)
            #expect(m.store(UInt16(0x1234), at: 0))
            #expect(m.store(UInt32(0xDEADBEEF), at: 2))
            #expect(!m.store(UInt32(1), at: 3))
            #expect(!m.store(UInt16(1), at: -1))
            #expect(!m.store(UInt8(1), at: 6))
            #expect(m.load(UInt16.self, at: 0) == 0x1234)
            #expect(m.load(UInt32.self, at: 3) == nil)
        }
        #expect(packet == [0x12, 0x34, 0xDE, 0xAD, 0xBE, 0xEF])
    }
}
