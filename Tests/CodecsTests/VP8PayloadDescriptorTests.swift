import Testing
import Wire

@testable import Codecs

@Suite struct VP8PayloadDescriptorTests {
    /// A keyframe start as Chrome sends it with three temporal layers.
    let keyframe: [UInt8] = [
        0x90,  // X=1 N=0 S=1 PID=0
        0xE0,  // I=1 L=1 T=1 K=0
        0x92, 0x34,  // M=1, PictureID 0x1234
        0x07,  // TL0PICIDX 7
        0x40,  // TID=1 Y=0 KEYIDX=0
        0x50, 0x42, 0x00,  // frame tag: P=0 (keyframe)
        0x9D, 0x01, 0x2A,  // start code
        0x80, 0x02,  // width 640 (little-endian, 14 bits)
        0x68, 0x41,  // height 360 with scale bits 01
        0xAA,
    ]

    @Test func parsesFullDescriptorAndKeyframeSize() throws {
        let d = try vp8(keyframe)
        #expect(d.isStartOfPartition && !d.isNonReference && d.partitionIndex == 0)
        #expect(d.pictureID == 0x1234 && d.hasLongPictureID && d.pictureIDOffset == 2)
        #expect(d.pictureIDModulus == 0x8000)
        #expect(d.tl0PictureIndex == 7 && d.tl0PictureIndexOffset == 4)
        #expect(d.temporalLayerID == 1 && !d.isLayerSync && d.keyIndex == nil)
        #expect(d.payloadHeaderOffset == 6)
        #expect(d.isKeyframe)
        #expect(d.keyframeWidth == 640 && d.keyframeHeight == 360)
    }

    @Test func parsesMinimalDescriptor() throws {
        let d = try vp8([0x10, 0x01, 0x00, 0x00])  // S=1 PID=0, frame tag P=1
        #expect(d.payloadHeaderOffset == 1)
        #expect(d.pictureID == nil && d.tl0PictureIndex == nil && d.temporalLayerID == nil)
        #expect(!d.isKeyframe)
        #expect(d.keyframeWidth == nil)
    }

    @Test func parsesShortPictureIDAndKeyIndexWithSync() throws {
        let d = try vp8([0xA2, 0xB0, 0x15, 0xE3, 0x01, 0x00, 0x00])
        // X=1 N=1 S=0 PID=2; I=1 T=1 K=1; PictureID 0x15; TID=3 Y=1 KEYIDX=3
        #expect(d.isNonReference && !d.isStartOfPartition && d.partitionIndex == 2)
        #expect(d.pictureID == 0x15 && !d.hasLongPictureID && d.pictureIDModulus == 0x80)
        #expect(d.temporalLayerID == 3 && d.isLayerSync && d.keyIndex == 3)
        #expect(d.payloadHeaderOffset == 4)
        #expect(!d.isKeyframe)  // not the start of partition 0
    }

    @Test func keyframeWithoutFullFrameHeaderHasNoSize() throws {
        let d = try vp8([0x10, 0x50, 0x42, 0x00, 0x9D, 0x01])
        #expect(d.isKeyframe)
        #expect(d.keyframeWidth == nil && d.keyframeHeight == nil)
        let wrongStartCode = try vp8([0x10, 0x50, 0x42, 0x00, 0x9D, 0x01, 0x2B, 1, 1, 1, 1])
        #expect(wrongStartCode.isKeyframe && wrongStartCode.keyframeWidth == nil)
    }

    @Test func rejectsEmptyPayload() {
        #expect(throws: CodecParseError.empty) { try vp8([]) }
    }

    @Test func rejectsExtensionBitWithoutExtensionByte() {
        #expect(throws: CodecParseError.truncated) { try vp8([0x80]) }
    }

    @Test func rejectsLongPictureIDWithOneByte() {
        #expect(throws: CodecParseError.truncated) { try vp8([0x80, 0x80, 0x81]) }
    }

    @Test func rejectsMissingTL0AndTIDBytes() {
        #expect(throws: CodecParseError.truncated) { try vp8([0x80, 0x40]) }
        #expect(throws: CodecParseError.truncated) { try vp8([0x80, 0x20]) }
        #expect(throws: CodecParseError.truncated) { try vp8([0x80, 0x10]) }
    }

    @Test func rewritesLongPictureIDAndTL0InPlace() throws {
        var packet: [UInt8] = [0x80, 0x60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1] + keyframe  // 12-byte RTP header
        let d = try vp8(keyframe)
        let ok = packet.withUnsafeMutableBytes { raw -> Bool in
            let m = MutableBytes(raw)
            return d.rewritePictureID(0xFFFF, in: m, payloadOffset: 12) && d.rewriteTL0PictureIndex(200, in: m, payloadOffset: 12)
        }
        #expect(ok)
        let after = try vp8(Array(packet[12...]))
        #expect(after.pictureID == 0x7FFF && after.hasLongPictureID)
        #expect(after.tl0PictureIndex == 200)
        #expect(after.temporalLayerID == 1 && after.isKeyframe)
    }

    @Test func rewritesShortPictureIDKeepingSevenBits() throws {
        var payload: [UInt8] = [0x90, 0x80, 0x15, 0x00, 0x00, 0x00]
        let d = try vp8(payload)
        let ok = payload.withUnsafeMutableBytes { d.rewritePictureID(0x1FF, in: MutableBytes($0), payloadOffset: 0) }
        #expect(ok)
        #expect(payload[2] == 0x7F)
        #expect(try vp8(payload).pictureID == 0x7F)
    }

    @Test func refusesRewriteWhenFieldAbsentOrBufferDoesNotMatch() throws {
        var payload: [UInt8] = [0x10, 0x00, 0x00, 0x00]
        let plain = try vp8(payload)
        let withID = try vp8(keyframe)
        let results = payload.withUnsafeMutableBytes { raw -> [Bool] in
            let m = MutableBytes(raw)
            return [
                plain.rewritePictureID(1, in: m, payloadOffset: 0),
                plain.rewriteTL0PictureIndex(1, in: m, payloadOffset: 0),
                withID.rewritePictureID(1, in: m, payloadOffset: 0),  // byte 2 has M=0
                withID.rewritePictureID(1, in: m, payloadOffset: 100),  // out of bounds
                withID.rewriteTL0PictureIndex(1, in: m, payloadOffset: Int.max),  // overflow wraps, out of bounds
            ]
        }
        #expect(results == [false, false, false, false, false])
        #expect(payload == [0x10, 0x00, 0x00, 0x00])
    }
}
