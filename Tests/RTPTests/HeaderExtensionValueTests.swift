import Testing
import Wire

@testable import RTP

/// Pins the literal's element type: a bare `[1, 2].span.bytes` would be
/// an `[Int]`'s 16 bytes.
func bytes(_ b: [UInt8]) -> RawSpan { b.span.bytes }

@Suite struct HeaderExtensionValueTests {
    @Test func parsesTransportSequenceNumber() {
        #expect(TransportSequenceNumber(value: bytes([0xAB, 0xCD])) == TransportSequenceNumber(0xABCD))
        #expect(TransportSequenceNumber(value: bytes([0xAB])) == nil)
        #expect(TransportSequenceNumber(value: bytes([0xAB, 0xCD, 0xEF])) == nil)
    }

    @Test func parsesAbsoluteSendTimeAsSixEighteenFixedPoint() {
        let t = AbsoluteSendTime(value: bytes([0x04, 0x00, 0x00]))
        #expect(t?.rawValue == 0x04_0000)
        #expect(t?.nanoseconds == 1_000_000_000)  // 0x040000 = 1 << 18 = 1 s
        #expect(AbsoluteSendTime(nanoseconds: 1_500_000_000).rawValue == 0x06_0000)
        // Wraps every 64 s.
        #expect(AbsoluteSendTime(nanoseconds: 65_000_000_000).rawValue == 0x04_0000)
        #expect(AbsoluteSendTime(nanoseconds: .max).rawValue < AbsoluteSendTime.modulus)
        #expect(AbsoluteSendTime(rawValue: 0xFF12_3456).rawValue == 0x12_3456)
        #expect(AbsoluteSendTime(value: bytes([1, 2])) == nil)
    }

    @Test func parsesAudioLevelVoiceBitAndLevel() {
        #expect(AudioLevel(value: bytes([0x85])) == AudioLevel(voiceActivity: true, level: 5))
        #expect(AudioLevel(value: bytes([0x7F])) == AudioLevel(voiceActivity: false, level: 127))
        #expect(AudioLevel(voiceActivity: true, level: 0xFF).byte == 0xFF)
        #expect(AudioLevel(value: [UInt8]().span.bytes) == nil)
        #expect(AudioLevel(value: bytes([1, 2])) == nil)
    }

    @Test func parsesVideoOrientation() {
        #expect(
            VideoOrientation(value: bytes([0x0D]))
                == VideoOrientation(backFacingCamera: true, horizontalFlip: true, quarterTurns: 1))
        #expect(VideoOrientation(value: bytes([0x02]))?.quarterTurns == 2)
        #expect(VideoOrientation(value: [UInt8]().span.bytes) == nil)
    }

    @Test func parsesMIDAndRIDWithinShortTokenLimits() {
        #expect(MID(extensionValue: Array("audio".utf8).span.bytes) == MID("audio"))
        #expect(RID(extensionValue: Array("hi".utf8).span.bytes) == RID("hi"))
        #expect(MID(extensionValue: [UInt8]().span.bytes) == nil)
        #expect(RID(extensionValue: [UInt8](repeating: 0x61, count: 17).span.bytes) == nil)
    }
}
