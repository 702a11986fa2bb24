import BotMedia
import RTP
import Testing
import Wire

/// 1/16 s: a binary fraction, so NTP conversions are exact.
private let tick = Duration.nanoseconds(62_500_000)
private let clock = NTPClock(base: 100 << 32, epoch: .zero)

private func at(_ n: Int) -> Instant { .zero + .nanoseconds(Int64(n) * tick.nanoseconds) }

/// One video frame packetized: frame i sent at `at(i)` with that NTP
/// time as abs-capture-time (id 7) unless `captureTime` is false.
private func videoPackets(
    _ frames: [EncodedFrame], ssrc: UInt32 = 9, captureTime: Bool = true, maxPayloadSize: Int = 1100
) throws -> [[[UInt8]]] {
    var packetizer = try VP8Packetizer(
        ssrc: SSRC(ssrc), payloadType: PayloadType(masking: 96), extensionIDs: HeaderExtensionIDs(absoluteCaptureTime: 7),
        maxPayloadSize: maxPayloadSize)
    var twcc: UInt16 = 0
    var buffer = [UInt8](repeating: 0, count: 1500)
    return try frames.enumerated().map { i, frame in
        var packets: [[UInt8]] = []
        _ = try buffer.withUnsafeMutableBytes { raw in
            try packetizer.packetize(
                frame, rtpTimestamp: UInt32(i) * 5625, captureTime: captureTime ? clock.ntp(at: at(i)) : nil,
                transportSequenceNumber: &twcc, into: raw
            ) { n in packets.append(Array(raw[0..<n])) }
        }
        return packets
    }
}

@discardableResult
private func feed(_ receiver: inout VideoTrackReceiver, _ packets: [[UInt8]], arrival: Instant) throws -> Int {
    var frames = 0
    for packet in packets {
        let span = packet.span.bytes
        if receiver.handle(try RTPHeader(parsing: span), packet: span, arrival: arrival) != nil { frames += 1 }
    }
    return frames
}

private let clip = PublisherFixtures.videoClip(count: 6, keyframeInterval: 3)

@Test func videoDelayComesFromAbsCaptureTime() throws {
    var receiver = VideoTrackReceiver(absCaptureTimeID: 7, clock: clock)
    let packets = try videoPackets(clip.frames)
    for (i, frame) in packets.enumerated() { try feed(&receiver, frame, arrival: at(i) + .milliseconds(125)) }
    #expect(receiver.delay.count == 6)
    #expect(receiver.delay.minimum == .milliseconds(125))
    #expect(receiver.delay.maximum == .milliseconds(125))
    #expect(receiver.firstFrameAt == at(0) + .milliseconds(125))
}

@Test func videoDelayFallsBackToTheSenderReportMapping() throws {
    var receiver = VideoTrackReceiver(absCaptureTimeID: 7, clock: clock)
    let packets = try videoPackets(clip.frames, captureTime: false)
    try feed(&receiver, packets[0], arrival: at(0))
    #expect(receiver.delay.count == 0)  // no SR yet, no abs-capture-time
    // The SR says RTP time 0 was NTP at(0); frame 2 (timestamp 11250 =
    // 125 ms) arrives 250 ms after its capture.
    receiver.senderReport(ntp: clock.ntp(at: at(0)), rtpTimestamp: 0)
    try feed(&receiver, packets[1], arrival: at(1) + .milliseconds(40))
    try feed(&receiver, packets[2], arrival: at(2) + .milliseconds(250))
    #expect(receiver.delay.count == 2)
    #expect(receiver.delay.maximum == .milliseconds(250))
}

@Test func firstFrameWaitsForAKeyframe() throws {
    var receiver = VideoTrackReceiver(absCaptureTimeID: 7, clock: clock)
    let packets = try videoPackets(clip.frames)
    // Joining after the first keyframe: frames 1 and 2 are undecodable.
    #expect(try feed(&receiver, packets[1], arrival: at(1)) == 0)
    #expect(try feed(&receiver, packets[2], arrival: at(2)) == 0)
    #expect(receiver.firstFrameAt == nil)
    #expect(receiver.undecodableFrames == 2)
    #expect(try feed(&receiver, packets[3], arrival: at(3)) == 1)
    #expect(receiver.firstFrameAt == at(3))
}

@Test func gapOfMoreThanHalfASecondBetweenFramesIsAFreeze() throws {
    var receiver = VideoTrackReceiver(absCaptureTimeID: 7, clock: clock)
    let packets = try videoPackets(clip.frames)
    try feed(&receiver, packets[0], arrival: at(0))
    try feed(&receiver, packets[1], arrival: at(1))
    try feed(&receiver, packets[2], arrival: at(1) + .milliseconds(500))  // exactly 500: not a freeze
    try feed(&receiver, packets[3], arrival: at(1) + .milliseconds(1200))
    #expect(receiver.freezes.freezeCount == 1)
    #expect(receiver.freezes.totalFreezeDuration == .milliseconds(700))
}

@Test func switchTimeRunsFromRequestToFirstKeyframeOfTheNewHeight() throws {
    var receiver = VideoTrackReceiver(absCaptureTimeID: 7, clock: clock)
    let small = try videoPackets(clip.frames)
    let large = try videoPackets(PublisherFixtures.videoClip(width: 640, height: 360).frames, ssrc: 10)
    try feed(&receiver, small[0], arrival: at(0))
    receiver.switchRequested(height: 180, at: at(0))  // already showing 180: nothing pending
    receiver.switchRequested(height: 360, at: at(1))
    try feed(&receiver, small[1], arrival: at(2))
    try feed(&receiver, large[3], arrival: at(5))
    #expect(receiver.switchTimes.count == 1)
    #expect(receiver.switchTimes.maximum == tick * 4)
    #expect(receiver.resolutionChanges == 1)
    #expect(receiver.switchesUnfinished == 0)
}

@Test func switchRequestedAgainBeforeTheFirstOneShowedIsUnfinished() throws {
    var receiver = VideoTrackReceiver(absCaptureTimeID: 7, clock: clock)
    let small = try videoPackets(clip.frames)
    try feed(&receiver, small[0], arrival: at(0))
    receiver.switchRequested(height: 720, at: at(1))
    receiver.switchRequested(height: 360, at: at(2))
    receiver.switchRequested(height: 180, at: at(3))
    #expect(receiver.switchesUnfinished == 2)
    #expect(receiver.switchTimes.count == 0)
}

@Test func audioDelayComesFromAbsCaptureTime() throws {
    let receiver = try AudioTrackReceiver(absCaptureTimeID: 7, clock: clock)
    var packetizer = try OpusPacketizer(
        ssrc: SSRC(3), payloadType: PayloadType(masking: 111), extensionIDs: HeaderExtensionIDs(absoluteCaptureTime: 7))
    var twcc: UInt16 = 0
    var buffer = [UInt8](repeating: 0, count: 1500)
    for (i, frame) in PublisherFixtures.audioClip.frames.enumerated() {
        var packet: [UInt8] = []
        _ = try buffer.withUnsafeMutableBytes { raw in
            try packetizer.packetize(
                frame, rtpTimestamp: UInt32(i) * 960, captureTime: clock.ntp(at: at(i)),
                transportSequenceNumber: &twcc, into: raw
            ) { n in packet = Array(raw[0..<n]) }
        }
        let span = packet.span.bytes
        receiver.handle(try RTPHeader(parsing: span), packet: span, arrival: at(i) + .milliseconds(375))
    }
    #expect(receiver.delay.count == 5)
    #expect(receiver.delay.minimum == .milliseconds(375))
    #expect(receiver.delay.maximum == .milliseconds(375))
    #expect(receiver.firstPacketAt == at(0) + .milliseconds(375))
}

@Test func audioWithoutAbsCaptureTimeHasNoDelaySamples() throws {
    let receiver = try AudioTrackReceiver(absCaptureTimeID: 7, clock: clock)
    var packetizer = try OpusPacketizer(ssrc: SSRC(3), payloadType: PayloadType(masking: 111))
    var twcc: UInt16 = 0
    var buffer = [UInt8](repeating: 0, count: 1500)
    var packet: [UInt8] = []
    _ = try buffer.withUnsafeMutableBytes { raw in
        try packetizer.packetize(
            PublisherFixtures.audioClip.frames[0], rtpTimestamp: 0, transportSequenceNumber: &twcc, into: raw
        ) { n in packet = Array(raw[0..<n]) }
    }
    let span = packet.span.bytes
    receiver.handle(try RTPHeader(parsing: span), packet: span, arrival: at(1))
    #expect(receiver.delay.count == 0)
    #expect(receiver.firstPacketAt == at(1))
}
