import BotMedia
import Testing
import Wire

/// Clips shared by the video tests: encoding costs CPU, so each is made
/// once per test process.
enum SharedClips {
    /// 320x180, 30 fps, 2 s, three temporal layers, keyframe every 20 frames.
    static let small: VideoClip = try! VideoClipEncoder.encode(
        width: 320, height: 180, framesPerSecond: 30, seconds: 2, targetBitrate: .kbps(150), temporalLayers: 3,
        keyframeInterval: 20)
    /// 640x360, 1 s, two temporal layers, keyframe every 10 frames.
    static let medium: VideoClip = try! VideoClipEncoder.encode(
        width: 640, height: 360, framesPerSecond: 30, seconds: 1, targetBitrate: .kbps(500), temporalLayers: 2,
        keyframeInterval: 10)
}

@Test func encodedClipHasOneFramePerTickAndKeyframesAtTheInterval() {
    let clip = SharedClips.small
    #expect(clip.frames.count == 60)
    #expect(clip.width == 320 && clip.height == 180 && clip.temporalLayers == 3)
    let keyIndexes = clip.frames.indices.filter { clip.frames[$0].isKeyframe }
    #expect(keyIndexes == [0, 20, 40])
    #expect(clip.frames[0].duration == .milliseconds(1000) / 30)
    #expect(clip.rtpTimestampStep == 3000)
}

@Test func temporalLayerIDsFollowTheThreeLayerPattern() {
    let clip = SharedClips.small
    let layers = clip.frames.prefix(8).map(\.temporalLayer)
    #expect(layers == [0, 2, 1, 2, 0, 2, 1, 2])
    let syncs = clip.frames.prefix(8).map(\.layerSync)
    #expect(syncs == [true, true, true, false, false, true, true, false])
    let two = SharedClips.medium.frames.prefix(4).map(\.temporalLayer)
    #expect(two == [0, 1, 0, 1])
}

@Test func everyFrameOfTheClipDecodesAtTheRightSize() throws {
    for clip in [SharedClips.small, SharedClips.medium] {
        var decoder = try VP8Decoder()
        for frame in clip.frames {
            let size = try decoder.decode(frame.bytes.span.bytes)
            #expect(size?.width == clip.width)
            #expect(size?.height == clip.height)
        }
        // Looping: the first frame again after the last one.
        let first = clip.frames[0].bytes
        let again = try decoder.decode(first.span.bytes)
        #expect(again?.width == clip.width)
    }
}

@Test func droppingUpperTemporalLayersStillDecodes() throws {
    let clip = SharedClips.small
    for maxLayer in [UInt8(0), 1] {
        var decoder = try VP8Decoder()
        var decoded = 0
        for frame in clip.frames where frame.temporalLayer <= maxLayer {
            let size = try decoder.decode(frame.bytes.span.bytes)
            #expect(size?.height == 180)
            decoded += 1
        }
        #expect(decoded == (maxLayer == 0 ? 15 : 30))
    }
}

@Test func encoderRejectsParametersOutsideItsRange() {
    #expect(throws: BotMediaError.invalidParameter) {
        try VideoClipEncoder.encode(
            width: 321, height: 180, framesPerSecond: 30, seconds: 1, targetBitrate: .kbps(100), temporalLayers: 1,
            keyframeInterval: 30)
    }
    #expect(throws: BotMediaError.invalidParameter) {
        try VideoClipEncoder.encode(
            width: 320, height: 180, framesPerSecond: 30, seconds: 1, targetBitrate: .kbps(100), temporalLayers: 3,
            keyframeInterval: 30)
    }
    #expect(throws: BotMediaError.invalidParameter) {
        try VideoClipEncoder.encode(
            width: 320, height: 180, framesPerSecond: 30, seconds: 1, targetBitrate: .kbps(100), temporalLayers: 4,
            keyframeInterval: 32)
    }
}

@Test func presetsMatchTheIssuesSimulcastLayers() {
    let sizes = VideoClipPreset.simulcast.map { [$0.width, $0.height, Int($0.targetBitrate.bitsPerSecond / 1000)] }
    #expect(sizes == [[320, 180, 150], [640, 360, 500], [1280, 720, 1500]])
}
