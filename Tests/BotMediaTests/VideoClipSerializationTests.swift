import BotMedia
import Codecs
import Testing
import Wire

/// A two-frame clip small enough to write out byte by byte.
private let tinyClip = VideoClip(
    width: 320, height: 180, framesPerSecond: 30, temporalLayers: 2, keyframeInterval: 2,
    targetBitrate: .kbps(150),
    frames: [
        EncodedFrame(bytes: [0xAA, 0xBB], isKeyframe: true, layerSync: true, duration: .seconds(1) / 30),
        EncodedFrame(bytes: [0xCC], isKeyframe: false, temporalLayer: 1, layerSync: true, duration: .seconds(1) / 30),
    ])

/// Version 1 (VP8, before the codec byte), still read.
private let tinyClipBytes: [UInt8] = [
    0x53, 0x4C, 0x56, 0x43,  // magic "SLVC"
    0x01,  // version 1
    0x01, 0x40, 0x00, 0xB4, 0x00, 0x1E,  // 320 x 180, 30 fps
    0x02,  // two temporal layers
    0x00, 0x00, 0x00, 0x02,  // keyframe interval 2
    0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x49, 0xF0,  // 150000 bit/s
    0x00, 0x00, 0x00, 0x02,  // two frames
    0x03, 0x00, 0x00, 0x00, 0x00, 0x02, 0xAA, 0xBB,  // keyframe + sync, TL0, 2 bytes
    0x02, 0x01, 0x00, 0x00, 0x00, 0x01, 0xCC,  // sync, TL1, 1 byte
]

private func parse(_ bytes: [UInt8]) throws(BotMediaError) -> VideoClip {
    try VideoClip(deserializing: bytes.span.bytes)
}

/// Version 2: the codec byte after the version.
private func version2(codec: UInt8) -> [UInt8] { Array(tinyClipBytes[0..<4]) + [0x02, codec] + tinyClipBytes[5...] }

@Test func clipSerializesToTheDocumentedFormat() throws {
    #expect(tinyClip.serialized() == version2(codec: 0))
    #expect(try parse(version2(codec: 0)) == tinyClip)
    #expect(try parse(tinyClipBytes) == tinyClip)
    var h264 = tinyClip
    h264.codec = .h264
    #expect(h264.serialized() == version2(codec: 1))
    #expect(try parse(version2(codec: 1)) == h264)
    #expect(throws: BotMediaError.malformed) { try parse(version2(codec: 2)) }
}

@Test func encodedClipSurvivesASerializationRoundTrip() throws {
    let clip = SharedClips.small
    #expect(try parse(clip.serialized()) == clip)
}

@Test func everyTruncationOfAClipIsATypedError() {
    for length in 0..<tinyClipBytes.count {
        #expect(throws: BotMediaError.self) { try parse(Array(tinyClipBytes[0..<length])) }
    }
    #expect(throws: BotMediaError.truncated) { try parse(Array(tinyClipBytes[0..<30])) }
}

@Test func malformedClipFieldsAreRejected() {
    func with(_ offset: Int, _ value: UInt8) -> [UInt8] {
        var bytes = tinyClipBytes
        bytes[offset] = value
        return bytes
    }
    #expect(throws: BotMediaError.badMagic) { try parse(with(0, 0x54)) }
    #expect(throws: BotMediaError.unsupportedVersion(3)) { try parse(with(4, 3)) }
    #expect(throws: BotMediaError.malformed) { try parse(with(10, 0)) }  // 0 fps
    #expect(throws: BotMediaError.malformed) { try parse(with(11, 4)) }  // 4 temporal layers
    #expect(throws: BotMediaError.malformed) { try parse(with(15, 3)) }  // interval not a multiple of 2
    #expect(throws: BotMediaError.malformed) { try parse(with(16, 0x80)) }  // bitrate beyond Int64
    #expect(throws: BotMediaError.malformed) { try parse(with(28, 0x07)) }  // unknown flag bit
    #expect(throws: BotMediaError.malformed) { try parse(with(29, 2)) }  // layer 2 of 2
    #expect(throws: BotMediaError.malformed) { try parse(with(28, 0x02)) }  // clip does not start on a keyframe
    #expect(throws: BotMediaError.trailingBytes) { try parse(tinyClipBytes + [0]) }
}

@Test func oversizedCountsAndLengthsAreRejectedBeforeAllocating() {
    var hugeCount = tinyClipBytes
    hugeCount.replaceSubrange(24..<28, with: [0xFF, 0xFF, 0xFF, 0xFF])
    #expect(throws: BotMediaError.truncated) { try parse(hugeCount) }
    var hugeLength = tinyClipBytes
    hugeLength.replaceSubrange(30..<34, with: [0xFF, 0xFF, 0xFF, 0xFF])
    #expect(throws: BotMediaError.malformed) { try parse(hugeLength) }
    var longerThanInput = tinyClipBytes
    longerThanInput.replaceSubrange(30..<34, with: [0x00, 0x00, 0x01, 0x00])
    #expect(throws: BotMediaError.truncated) { try parse(longerThanInput) }
}

@Test func randomMutationsOfAClipNeverTrap() {
    var state: UInt64 = 0x1234_5678_9ABC_DEF1
    func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    var parsed = 0
    for _ in 0..<5000 {
        // The current format: whatever parses writes back the same bytes.
        var bytes = version2(codec: 0)
        for _ in 0..<Int(1 + next() % 4) {
            let at = Int(next() % UInt64(bytes.count))
            switch next() % 3 {
            case 0: bytes[at] = UInt8(truncatingIfNeeded: next())
            case 1: bytes.remove(at: at)
            default: bytes.insert(UInt8(truncatingIfNeeded: next()), at: at)
            }
            if bytes.isEmpty { break }
        }
        if let clip = try? parse(bytes) {
            parsed += 1
            // Whatever parses serializes back to the same bytes.
            #expect(clip.serialized() == bytes)
        }
    }
    #expect(parsed < 5000)
}
