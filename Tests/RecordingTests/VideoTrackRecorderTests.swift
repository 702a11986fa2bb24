import BotMedia
import Recording
import Testing
import Wire

/// A VP8 keyframe (RFC 6386 section 9.1: frame tag with P = 0, start
/// code, 640x360) or a delta frame, padded to `length` bytes.
private func frame(key: Bool, length: Int = 40) -> EncodedFrame {
    var bytes: [UInt8] = key ? [0x10, 0, 0, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0x68, 0x01] : [0x11, 0, 0]
    bytes += [UInt8](repeating: 0xAB, count: length - bytes.count)
    return EncodedFrame(bytes: bytes, isKeyframe: key, duration: .milliseconds(33))
}

/// Each frame's packets (at most 16 VP8 bytes each), 3000 ticks apart.
private func packets(_ frames: [EncodedFrame]) throws -> [[[UInt8]]] {
    var packetizer = try VP8Packetizer(ssrc: SSRC(5), payloadType: PayloadType(masking: 96), maxPayloadSize: 22)
    var twcc: UInt16 = 0
    var buffer = [UInt8](repeating: 0, count: 200)
    return try frames.enumerated().map { i, f in
        var out: [[UInt8]] = []
        try buffer.withUnsafeMutableBytes { raw in
            try packetizer.packetize(
                f, rtpTimestamp: UInt32(i) * 3000, captureTime: nil, transportSequenceNumber: &twcc, into: raw
            ) { n in out.append(Array(raw[0..<n])) }
        }
        return out
    }
}

private func at(_ ms: Int64) -> Instant { Instant(nanoseconds: ms * 1_000_000) }

private struct Run {
    var recorder = VideoTrackRecorder(layerCount: 1, repairWait: .milliseconds(400))
    var written: [(ms: Int64, key: Bool)] = []
    var requests = 0

    mutating func feed(_ packet: [UInt8], at ms: Int64) {
        var outputs: [VideoTrackRecorder.Output] = []
        packet.withUnsafeBytes { raw in recorder.packet(layer: 0, raw, now: at(ms)) { outputs.append($0) } }
        take(outputs)
    }

    mutating func tick(at ms: Int64) {
        var outputs: [VideoTrackRecorder.Output] = []
        recorder.tick(now: at(ms)) { outputs.append($0) }
        take(outputs)
    }

    mutating func take(_ outputs: [VideoTrackRecorder.Output]) {
        for o in outputs {
            switch o {
            case .frame(let t, let key, _, _, _): written.append(((t - 100_000_000) / 1000, key))
            case .keyframeRequest: requests += 1
            }
        }
    }
}

@Test func framesWaitForTheFirstSenderReportThenComeOutTimed() throws {
    let p = try packets([frame(key: true), frame(key: false)])
    var run = Run()
    for (i, f) in p.enumerated() { for packet in f { run.feed(packet, at: Int64(i) * 33) } }
    run.tick(at: 100)
    #expect(run.written.isEmpty)
    var outputs: [VideoTrackRecorder.Output] = []
    // RTP 0 is NTP 100 s.
    run.recorder.senderReport(layer: 0, ntp: 100 << 32, rtpTimestamp: 0) { outputs.append($0) }
    run.take(outputs)
    #expect(run.written.map(\.ms) == [0, 33])
    #expect(run.written.map(\.key) == [true, false])
    // The start asked for a keyframe once.
    #expect(run.requests == 1)
}

@Test func aRepairedPacketKeepsEveryFrame() throws {
    let p = try packets([frame(key: true), frame(key: false), frame(key: false)])
    var run = Run()
    run.recorder.senderReport(layer: 0, ntp: 100 << 32, rtpTimestamp: 0) { _ in }
    for packet in p[0] { run.feed(packet, at: 0) }
    // Frame 1's second packet is lost, frame 2 arrives, then the repair.
    run.feed(p[1][0], at: 33)
    for packet in p[1].dropFirst(2) { run.feed(packet, at: 33) }
    for packet in p[2] { run.feed(packet, at: 66) }
    #expect(run.written.count == 1)
    run.feed(p[1][1], at: 200)
    #expect(run.written.map(\.ms) == [0, 33, 66])
    #expect(run.recorder.statistics.framesSkipped == 0)
}

@Test func aLossNotRepairedSkipsToTheNextKeyframeAndAsksForOne() throws {
    let p = try packets([frame(key: true), frame(key: false), frame(key: false), frame(key: true), frame(key: false)])
    var run = Run()
    run.recorder.senderReport(layer: 0, ntp: 100 << 32, rtpTimestamp: 0) { _ in }
    for packet in p[0] { run.feed(packet, at: 0) }
    let requestsAtStart = run.requests
    run.feed(p[1][0], at: 1100)
    for packet in p[1].dropFirst(2) { run.feed(packet, at: 1100) }
    for packet in p[2] { run.feed(packet, at: 1133) }
    run.tick(at: 1600)
    // Frame 1's packet is given up at 1,500 ms: a keyframe is asked for
    // at once. Frame 1 never completes; 2 depends on it: neither is
    // written.
    #expect(run.written.map(\.ms) == [0])
    #expect(run.requests == requestsAtStart + 1)
    for (i, f) in p.enumerated().dropFirst(3) { for packet in f { run.feed(packet, at: 1600 + Int64(i)) } }
    #expect(run.written.map(\.ms) == [0, 100, 133])
    #expect(run.written.map(\.key) == [true, true, false])
    // Frame 1 was given up incomplete; 2, complete, did not decode.
    #expect(run.recorder.statistics.framesSkipped == 1)
    #expect(run.recorder.statistics.packetsGivenUp == 1)
}

@Test func aRecordingStartedMidStreamAsksForAKeyframeAndWritesFromIt() throws {
    let p = try packets([frame(key: false), frame(key: false), frame(key: true), frame(key: false)])
    var run = Run()
    run.recorder.senderReport(layer: 0, ntp: 100 << 32, rtpTimestamp: 0) { _ in }
    // Delta frames: no layer chosen yet, nothing written, one request.
    for (i, f) in p.enumerated().prefix(2) { for packet in f { run.feed(packet, at: Int64(i) * 33) } }
    #expect(run.written.isEmpty)
    #expect(run.requests == 1)
    for (i, f) in p.enumerated().dropFirst(2) { for packet in f { run.feed(packet, at: Int64(i) * 33) } }
    #expect(run.written.map(\.ms) == [66, 99])
    #expect(run.written.first?.key == true)
}
