import Testing
import Wire

@testable import Codecs

@Suite struct PayloadDescriptorTests {
    func descriptor(_ codec: VideoCodec, _ b: [UInt8]) throws(CodecParseError) -> PayloadDescriptor {
        try PayloadDescriptor(codec: codec, payload: b.span.bytes)
    }

    @Test func dispatchesByCodec() throws {
        #expect(try descriptor(.vp8, [0x10, 0x00, 0x00, 0x00]).isKeyframe == true)
        #expect(try descriptor(.h264, [0x41, 0x00]).isKeyframe == false)
    }

    @Test func vp9AndAV1AreUnsupportedNotGuessed() throws {
        #expect(try descriptor(.vp9, [0x88]) == .unsupported(.vp9))
        #expect(try descriptor(.av1, []) == .unsupported(.av1))
        #expect(try descriptor(.vp9, [0x88]).isKeyframe == nil)
    }
}
