import Testing
import Wire

@testable import Codecs

@Suite struct OpusTOCTests {
    @Test func parsesTypicalWebRTCPacket() throws {
        // config 31 (CELT FB 20 ms), mono, c=0: libopus at 48 kHz, 20 ms.
        let toc = try opus([0xF8, 0xFF, 0xFE])
        #expect(toc.configuration == 31 && !toc.isStereo && toc.frameCountCode == 0)
        #expect(toc.mode == .celt && toc.bandwidth == .fullband)
        #expect(toc.frameDuration == .milliseconds(20) && toc.frameCount == 1)
        #expect(toc.packetDuration == .milliseconds(20))
        #expect(!toc.isLikelyDTX)
    }

    @Test func mapsConfigurationsToModeBandwidthAndDuration() throws {
        let cases: [(UInt8, OpusTOC.Mode, OpusTOC.Bandwidth, Int)] = [
            (0, .silk, .narrowband, 10_000), (3, .silk, .narrowband, 60_000), (5, .silk, .mediumband, 20_000),
            (10, .silk, .wideband, 40_000), (12, .hybrid, .superWideband, 10_000), (15, .hybrid, .fullband, 20_000),
            (16, .celt, .narrowband, 2_500), (21, .celt, .wideband, 5_000), (26, .celt, .superWideband, 10_000),
            (28, .celt, .fullband, 2_500),
        ]
        for (config, mode, bandwidth, micros) in cases {
            let toc = try opus([config << 3 | 0x04, 0x00, 0x00])
            #expect(toc.mode == mode && toc.bandwidth == bandwidth && toc.frameDurationMicroseconds == micros)
            #expect(toc.isStereo)
        }
    }

    @Test func countsFramesForEachCode() throws {
        #expect(try opus([0x79, 0x01, 0x02]).frameCount == 2)  // c=1, 2 bytes split evenly
        #expect(try opus([0x7A, 0x01, 0xAA]).frameCount == 2)  // c=2
        let c3 = try opus([0x7B, 0x03, 0x00])  // c=3, M=3, config 15 (20 ms)
        #expect(c3.frameCount == 3 && c3.packetDuration == .milliseconds(60))
        let max = try opus([0x83, 0x30])  // config 16 (2.5 ms) x 48 = 120 ms
        #expect(max.frameCount == 48 && max.packetDuration == .milliseconds(120))
    }

    @Test func flagsTinyPacketsAsLikelyDTX() throws {
        #expect(try opus([0xF8]).isLikelyDTX)
        #expect(try opus([0xF8, 0x00]).isLikelyDTX)
    }

    @Test func rejectsEmptyPacket() {
        #expect(throws: CodecParseError.empty) { try opus([]) }
    }

    @Test func rejectsCodeThreeFrameCountZeroOrMissing() {
        #expect(throws: CodecParseError.invalidFrameCount(0)) { try opus([0x7B, 0x00]) }
        #expect(throws: CodecParseError.invalidFrameCount(49)) { try opus([0x83, 0x31]) }
        #expect(throws: CodecParseError.truncated) { try opus([0x7B]) }
    }

    @Test func rejectsMoreThan120Milliseconds() {
        // config 3 (SILK 60 ms) x 3 = 180 ms.
        #expect(throws: CodecParseError.durationTooLong) { try opus([0x1B, 0x03]) }
        // config 15 (20 ms) x 7 = 140 ms.
        #expect(throws: CodecParseError.durationTooLong) { try opus([0x7B, 0x87]) }
        // code 1: two 60 ms frames = 120 ms is the limit, allowed.
        #expect(throws: Never.self) { try opus([0x19]) }
    }

    @Test func rejectsMalformedTwoFramePackets() {
        #expect(throws: CodecParseError.invalidFrameLengths) { try opus([0x79, 0x01]) }
        #expect(throws: CodecParseError.truncated) { try opus([0x7A]) }
    }
}
