import Recording
import Testing

private func add(
    _ t: inout RecordingTimeline, _ stream: RecordingTimeline.Stream, ms: Int64, key: Bool = false
) -> [(RecordingTimeline.Stream, Int64)] {
    // A 20 ms Opus TOC byte (configuration 31: CELT FB 20 ms, code 0).
    let bytes: [UInt8] = stream == .audio ? [31 << 3] : [0]
    return t.add(stream, ntpMicroseconds: ms * 1000, isKeyframe: key, bytes: bytes).map { ($0.stream, $0.milliseconds) }
}

@Test func theFileStartsAtVideosFirstKeyframeWithTheAudioHeldForIt() {
    var t = RecordingTimeline(hasVideo: true)
    #expect(add(&t, .audio, ms: 1000).isEmpty)
    #expect(add(&t, .audio, ms: 1020).isEmpty)
    #expect(add(&t, .video, ms: 1010).isEmpty)  // a delta frame: dropped
    #expect(add(&t, .audio, ms: 1040).isEmpty)
    // The keyframe at 1015 arrives after the audio up to 1040.
    let out = add(&t, .video, ms: 1015, key: true)
    #expect(out.map(\.0) == [.audio, .audio, .video])
    #expect(out.map(\.1) == [5, 25, 0])
    #expect(t.statistics.audioBeforeStart == 1)
    #expect(t.statistics.videoBeforeStart == 1)
    #expect(add(&t, .audio, ms: 1060).map(\.1) == [45])
    #expect(add(&t, .video, ms: 1048).map(\.1) == [33])
}

@Test func audioOnlyStartsWithTheFirstFrame() {
    var t = RecordingTimeline(hasVideo: false)
    #expect(add(&t, .audio, ms: 500).map(\.1) == [0])
    #expect(add(&t, .audio, ms: 520).map(\.1) == [20])
    #expect(t.duration == 40)
}

@Test func audioNeverOverlapsAndVideoNeverGoesBack() {
    var t = RecordingTimeline(hasVideo: true)
    _ = add(&t, .video, ms: 0, key: true)
    #expect(add(&t, .audio, ms: 0).map(\.1) == [0])
    // 7 ms after the last frame began: moved to its end.
    #expect(add(&t, .audio, ms: 7).map(\.1) == [20])
    // Far back: dropped.
    #expect(add(&t, .audio, ms: -200).isEmpty)
    #expect(add(&t, .video, ms: 33).map(\.1) == [33])
    // A video frame that would go back is moved just after the last.
    #expect(add(&t, .video, ms: 30).map(\.1) == [34])
    #expect(t.statistics.videoNudged == 1)
}
