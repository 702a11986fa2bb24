import SFUTesting
import Testing
import Wire

@testable import Codecs

private func dimensions(_ b: [UInt8]) throws(CodecParseError) -> VP8KeyframeDimensions {
    try VP8KeyframeDimensions(parsing: b.span.bytes)
}

@Suite struct VP8KeyframeHeaderTests {
    /// 1280x720 keyframe header, no scaling.
    static let header720p: [UInt8] = [
        0x50, 0x42, 0x00,  // frame tag: P=0 (key), version 0, show_frame, first partition size
        0x9D, 0x01, 0x2A,  // start code
        0x00, 0x05,  // width 0x0500 = 1280, scale 0
        0xD0, 0x02,  // height 0x02D0 = 720, scale 0
    ]

    @Test func parsesWidthHeightAndScale() throws {
        #expect(try dimensions(Self.header720p) == VP8KeyframeDimensions(width: 1280, height: 720))
        var scaled = Self.header720p
        scaled[7] |= 0x40  // horizontal scale 1
        scaled[9] |= 0xC0  // vertical scale 3
        #expect(
            try dimensions(scaled)
                == VP8KeyframeDimensions(width: 1280, height: 720, horizontalScale: 1, verticalScale: 3))
        // Trailing partition data is not the header's business.
        #expect(try dimensions(Self.header720p + [0xAA, 0xBB]).height == 720)
    }

    @Test func readsTheSizeFromAWholeRTPPayload() throws {
        let payload = RTPBuilders.vp8Payload(keyframe: true, width: 320, height: 180)
        let descriptor = try VP8PayloadDescriptor(parsing: payload.span.bytes)
        let d = try VP8KeyframeDimensions(rtpPayload: payload.span.bytes, descriptor: descriptor)
        #expect(d == VP8KeyframeDimensions(width: 320, height: 180))
        let delta = RTPBuilders.vp8Payload(keyframe: false)
        let deltaDescriptor = try VP8PayloadDescriptor(parsing: delta.span.bytes)
        #expect(throws: CodecParseError.notVP8Keyframe) {
            try VP8KeyframeDimensions(rtpPayload: delta.span.bytes, descriptor: deltaDescriptor)
        }
    }

    @Test func rejectsTruncatedHeaders() {
        #expect(throws: CodecParseError.empty) { try dimensions([]) }
        for length in 1..<VP8KeyframeDimensions.headerLength {
            #expect(throws: CodecParseError.truncated) { try dimensions(Array(Self.header720p.prefix(length))) }
        }
    }

    @Test func rejectsInterframesBadStartCodesAndEmptySizes() {
        var inter = Self.header720p
        inter[0] |= 0x01  // P=1
        #expect(throws: CodecParseError.notVP8Keyframe) { try dimensions(inter) }
        var code = Self.header720p
        code[5] = 0x2B
        #expect(throws: CodecParseError.invalidVP8StartCode) { try dimensions(code) }
        var zeroWidth = Self.header720p
        zeroWidth[6] = 0
        zeroWidth[7] = 0x40  // scale set, size 0
        #expect(throws: CodecParseError.invalidVP8FrameHeader) { try dimensions(zeroWidth) }
        var version = Self.header720p
        version[0] = 0x0E  // version 7
        #expect(throws: CodecParseError.invalidVP8FrameHeader) { try dimensions(version) }
    }

    /// RFC 7741 section 4.3: a keyframe starts where S=1 and PID=0 and the
    /// payload header's P bit is 0; nothing else counts.
    @Test func descriptorKeyframeNeedsStartOfPartitionZeroAndPClear() throws {
        let tag: [UInt8] = [0x50, 0x42, 0x00]  // P=0
        #expect(try vp8([0x10] + tag).isKeyframe)  // S=1 PID=0
        #expect(try !vp8([0x11] + tag).isKeyframe)  // S=1 PID=1
        #expect(try !vp8([0x00] + tag).isKeyframe)  // S=0 PID=0
        #expect(try !vp8([0x10, 0x51, 0x42, 0x00]).isKeyframe)  // P=1
        #expect(try !vp8([0x10, 0x50, 0x42]).isKeyframe)  // frame tag cut short
    }

    @Test func oversizedValuesAreMaskedTo14Bits() throws {
        let d = try dimensions([0x00, 0x00, 0x00, 0x9D, 0x01, 0x2A, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(d == VP8KeyframeDimensions(width: 0x3FFF, height: 0x3FFF, horizontalScale: 3, verticalScale: 3))
    }
}

@Suite struct H264KeyframeTrackerTests {
    static let sps: [UInt8] = [0x67, 0x42, 0x00, 0x1F]  // NRI 3, type 7
    static let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]  // NRI 3, type 8
    static let fuAIDRStart: [UInt8] = [0x7C, 0x85, 0x88]  // FU-A indicator, S=1 type 5
    static let fuAIDRMiddle: [UInt8] = [0x7C, 0x05, 0x88]  // S=0 E=0 type 5
    static let stapA: [UInt8] = [
        0x78,  // STAP-A
        0x00, 0x04, 0x67, 0x42, 0x00, 0x1F,  // SPS
        0x00, 0x02, 0x68, 0xCE,  // PPS
        0x00, 0x03, 0x65, 0x88, 0x84,  // IDR
    ]

    @Test func theParameterSetsAheadOfAnIDRAreTheSwitchPoint() throws {
        // libwebrtc's order for an IDR larger than a packet: SPS, PPS,
        // then FU-A fragments, all with the IDR's timestamp. Starting at
        // the FU-A would drop the parameter sets the IDR needs.
        var tracker = H264KeyframeTracker()
        let r1 = tracker.isDecoderRefresh(try h264(Self.sps), timestamp: 9000)
        #expect(r1)
        let r2 = tracker.isDecoderRefresh(try h264(Self.pps), timestamp: 9000)
        #expect(!r2)
        let r3 = tracker.isDecoderRefresh(try h264(Self.fuAIDRStart), timestamp: 9000)
        #expect(!r3)
        let r4 = tracker.isDecoderRefresh(try h264(Self.fuAIDRMiddle), timestamp: 9000)
        #expect(!r4)
        // A second SPS of the same access unit starts nothing new.
        let r4b = tracker.isDecoderRefresh(try h264(Self.sps), timestamp: 9000)
        #expect(!r4b)
    }

    @Test func idrWithoutParameterSetsIsNotARefresh() throws {
        var tracker = H264KeyframeTracker()
        let idr = try h264(Self.fuAIDRStart)
        #expect(idr.isKeyframe)
        #expect(!idr.isDecoderRefreshPoint)
        let r5 = tracker.isDecoderRefresh(idr, timestamp: 9000)
        #expect(!r5)
        let r8 = tracker.isDecoderRefresh(idr, timestamp: 12000)
        #expect(!r8)
        // Parameter sets of an earlier picture do not carry over.
        let r9 = tracker.isDecoderRefresh(try h264(Self.sps), timestamp: 15000)
        #expect(r9)
        let r10 = tracker.isDecoderRefresh(idr, timestamp: 18000)
        #expect(!r10)
    }

    @Test func stapAWithSPSPPSAndIDRIsARefreshOnItsOwn() throws {
        let d = try h264(Self.stapA)
        #expect(d.isDecoderRefreshPoint)
        var tracker = H264KeyframeTracker()
        let r11 = tracker.isDecoderRefresh(d, timestamp: 0)
        #expect(r11)
    }
}
