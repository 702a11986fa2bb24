import Testing
import Wire

@testable import Codecs

@Suite struct H264PayloadDescriptorTests {
    @Test func parsesSingleNALUnits() throws {
        let idr = try h264([0x65, 0x88, 0x84])  // NRI=3 type 5
        #expect(idr.packetization == .singleNALUnit(type: 5))
        #expect(idr.nalReferenceIndicator == 3)
        #expect(idr.containsIDR && idr.isKeyframe)
        let slice = try h264([0x41, 0x9A])  // NRI=2 type 1
        #expect(slice.packetization == .singleNALUnit(type: 1))
        #expect(!slice.isKeyframe && !slice.containsSPS)
        let sps = try h264([0x67, 0x42, 0x00, 0x1F])
        #expect(sps.containsSPS && !sps.isKeyframe)
    }

    @Test func parsesSTAPAWithParameterSetsAndIDR() throws {
        let payload: [UInt8] = [
            0x78,  // STAP-A, NRI=3
            0x00, 0x04, 0x67, 0x42, 0x00, 0x1F,  // SPS, 4 bytes
            0x00, 0x02, 0x68, 0xCE,  // PPS, 2 bytes
            0x00, 0x03, 0x65, 0x88, 0x84,  // IDR, 3 bytes
        ]
        let d = try h264(payload)
        #expect(d.packetization == .stapA(unitCount: 3))
        #expect(d.containsSPS && d.containsPPS && d.containsIDR && d.isKeyframe)
        var units = H264PayloadDescriptor.STAPAUnits()
        var ranges: [Range<Int>] = []
        let span = payload.span.bytes
        while let r = units.next(in: span) { ranges.append(r) }
        #expect(ranges == [3..<7, 9..<11, 13..<16])
    }

    @Test func parsesFUAStartMiddleEnd() throws {
        let start = try h264([0x7C, 0x85, 0xAA])  // FU-A NRI=3, S=1 type 5
        #expect(start.packetization == .fuA(isStart: true, isEnd: false, originalType: 5))
        #expect(start.isKeyframe)
        let middle = try h264([0x7C, 0x05, 0xAA])
        #expect(middle.containsIDR && !middle.isKeyframe)
        let end = try h264([0x7C, 0x45, 0xAA])
        #expect(end.packetization == .fuA(isStart: false, isEnd: true, originalType: 5))
        let nonIDR = try h264([0x5C, 0x81, 0xAA])
        #expect(!nonIDR.isKeyframe)
    }

    @Test func reportsInterleavedModesAsUnsupported() throws {
        for type: UInt8 in [25, 26, 27, 29] {
            #expect(try h264([0x60 | type]).packetization == .unsupported(type: type))
        }
    }

    @Test func rejectsUndefinedTypesAndEmptyPayload() {
        #expect(throws: CodecParseError.empty) { try h264([]) }
        #expect(throws: CodecParseError.undefinedNALUnitType(0)) { try h264([0x00]) }
        #expect(throws: CodecParseError.undefinedNALUnitType(30)) { try h264([0x1E]) }
        #expect(throws: CodecParseError.undefinedNALUnitType(31)) { try h264([0x1F]) }
    }

    @Test func rejectsSTAPASizeBeyondPacket() {
        #expect(throws: CodecParseError.truncated) { try h264([0x78, 0x00, 0x05, 0x65, 0x88]) }
        #expect(throws: CodecParseError.truncated) { try h264([0x78, 0x00, 0x01, 0x65, 0xFF, 0xFF, 0x65]) }
    }

    @Test func rejectsSTAPAZeroSizeAndDanglingSizeByte() {
        #expect(throws: CodecParseError.emptyAggregationUnit) { try h264([0x78, 0x00, 0x00, 0x65]) }
        #expect(throws: CodecParseError.truncated) { try h264([0x78, 0x00, 0x01, 0x65, 0x00]) }
        #expect(throws: CodecParseError.truncated) { try h264([0x78]) }
    }

    @Test func rejectsOneByteFUAAndStartWithEnd() {
        #expect(throws: CodecParseError.truncated) { try h264([0x7C]) }
        #expect(throws: CodecParseError.invalidFragmentationUnit) { try h264([0x7C, 0xC5, 0xAA]) }
    }
}
