import BotMedia
import Codecs
import RTP
import Testing
import Wire

/// Small H.264 clips shared by the tests (encoding costs real CPU).
enum SharedH264Clips {
    /// 320x180, 30 fps, 1 s, an IDR every 15 frames.
    static let small: VideoClip = try! VideoClipEncoder.encodeH264(
        width: 320, height: 180, framesPerSecond: 30, seconds: 1, targetBitrate: .kbps(150), keyframeInterval: 15)
}

/// Packetizes every frame of `clip` at roombot's MTU (1100 bytes of payload).
private func packetize(_ clip: VideoClip, ssrc: UInt32 = 7, firstTimestamp: UInt32 = 0) throws -> [[UInt8]] {
    var packetizer = try H264Packetizer(
        ssrc: SSRC(ssrc), payloadType: PayloadType(masking: 96), extensionIDs: HeaderExtensionIDs(absoluteCaptureTime: 7))
    var out: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0, count: 1500)
    var twcc: UInt16 = 0
    for (i, frame) in clip.frames.enumerated() {
        try buffer.withUnsafeMutableBytes { raw in
            try packetizer.packetize(
                frame, rtpTimestamp: firstTimestamp &+ UInt32(i) * clip.rtpTimestampStep, captureTime: nil,
                transportSequenceNumber: &twcc, into: raw
            ) { out.append(Array(raw[0..<$0])) }
        }
    }
    return out
}

@Test func h264ClipIsConstrainedBaselineWithAnIDRAndParameterSetsOnEveryKeyframe() throws {
    let clip = SharedH264Clips.small
    #expect(clip.codec == .h264 && clip.frames.count == 30 && clip.temporalLayers == 1)
    #expect(clip.frames.indices.filter { clip.frames[$0].isKeyframe } == [0, 15])
    for frame in clip.frames where frame.isKeyframe {
        var cursor = AnnexBNALUnits()
        var types: [UInt8] = []
        var spsHead: [UInt8] = []
        let span = frame.bytes.span.bytes
        while let r = cursor.next(in: span) {
            types.append(frame.bytes[r.lowerBound] & 0x1F)
            if frame.bytes[r.lowerBound] & 0x1F == 7 { spsHead = Array(frame.bytes[r.lowerBound + 1..<r.lowerBound + 4]) }
        }
        #expect(types.prefix(2) == [7, 8] && types.contains(5))
        // profile_idc 66 (baseline) with constraint_set1 (constrained
        // baseline, RFC 6184 section 8.1), level 3.1.
        #expect(spsHead.count == 3 && spsHead[0] == 0x42 && spsHead[1] & 0x40 != 0 && spsHead[2] == 0x1F)
    }
    for frame in clip.frames where !frame.isKeyframe {
        var cursor = AnnexBNALUnits()
        let span = frame.bytes.span.bytes
        while let r = cursor.next(in: span) { #expect(frame.bytes[r.lowerBound] & 0x1F != 5) }
    }
}

@Test func h264ClipSurvivesPacketizingReassemblyAndDecoding() throws {
    let clip = SharedH264Clips.small
    let packets = try packetize(clip)
    #expect(packets.allSatisfy { $0.count <= 12 + 12 + 1100 })  // header with abs-capture-time, payload
    var assembler = H264FrameAssembler()
    var decoder = try H264Decoder()
    var sizes: [String] = []
    for p in packets {
        let span = p.span.bytes
        guard let frame = assembler.handle(try RTPHeader(parsing: span), packet: span, arrival: .zero) else { continue }
        #expect(frame.isDecodable)
        // The rebuilt access unit is the encoder's, byte for byte (both
        // write 4-byte start codes).
        let index = Int(frame.rtpTimestamp / clip.rtpTimestampStep)
        #expect(Array(assembler.frameBuffer[0..<frame.byteCount]) == clip.frames[index].bytes)
        let size = try assembler.frameBuffer.withUnsafeBytes { raw in
            try decoder.decode(RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: raw[0..<frame.byteCount])))
        }
        sizes.append(size.map { "\($0.width)x\($0.height)" } ?? "none")
    }
    #expect(sizes == Array(repeating: "320x180", count: 30))
    #expect(assembler.statistics.keyframes == 2 && assembler.statistics.framesComplete == 30)
}

@Test func eachSimulcastPresetEncodesAtItsSizeAndTheReceiverSeesTheSwitch() throws {
    // The three roombot layers, 1 s each at an IDR every 10 frames; the
    // receiver gets one SSRC whose stream changes layer on an IDR, as the
    // SFU forwards a switch.
    let clips = try VideoClipPreset.simulcast.map { p in
        try VideoClipEncoder.encodeH264(
            width: p.width, height: p.height, framesPerSecond: 30, seconds: 1, targetBitrate: p.targetBitrate,
            keyframeInterval: 10)
    }
    let receiver = try H264TrackReceiver(absCaptureTimeID: 7, clock: NTPClock(base: 1 << 32, epoch: .zero))
    var heights: [Int] = []
    var now = Instant.zero
    var sequence: UInt16 = 100
    for (layer, clip) in clips.enumerated() {
        for p in try packetize(clip, firstTimestamp: UInt32(layer) * 90_000) {
            var packet = p
            packet[2] = UInt8(sequence >> 8)  // one continuous sequence, as the SFU rewrites it
            packet[3] = UInt8(sequence & 0xFF)
            sequence &+= 1
            let span = packet.span.bytes
            if receiver.handle(try RTPHeader(parsing: span), packet: span, arrival: now) != nil {
                heights.append(receiver.resolution?.height ?? 0)
                now += .milliseconds(33)
            }
        }
    }
    #expect(heights == Array(repeating: 180, count: 30) + Array(repeating: 360, count: 30) + Array(repeating: 720, count: 30))
    #expect(receiver.timeline.resolutionChanges == 2 && receiver.timeline.freezes.freezeCount == 0)
    #expect(receiver.decodeErrors == 0 && receiver.undecodableFrames == 0)
}

@Test func aLostPacketMakesTheReceiverWaitForTheNextIDR() throws {
    let clip = SharedH264Clips.small
    var packets = try packetize(clip)
    // Drop the first packet of frame 3 (a P frame).
    let step = clip.rtpTimestampStep
    let victim = try #require(packets.firstIndex { (try? RTPHeader(parsing: $0.span.bytes))?.timestamp == 3 * step })
    packets.remove(at: victim)
    let receiver = try H264TrackReceiver(absCaptureTimeID: nil, clock: NTPClock(base: 1 << 32, epoch: .zero))
    var decoded: [UInt32] = []
    for p in packets {
        let span = p.span.bytes
        if let f = receiver.handle(try RTPHeader(parsing: span), packet: span, arrival: .zero) {
            decoded.append(f.rtpTimestamp / step)
        }
    }
    #expect(decoded == Array(0...2) + Array(15...29))
    #expect(receiver.undecodableFrames == 11 && receiver.decodeErrors == 0)  // frames 4...14
}
