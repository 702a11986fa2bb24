import BotMedia
import RTP
import Testing
import Wire

enum SharedAudio {
    static let clip: AudioClip = try! AudioClipEncoder.encode(seconds: 6)
}

@Test func audioLevelMeterFollowsRFC6464() {
    #expect(AudioLevelMeter.level([Int16](repeating: 0, count: 960)) == 127)
    // A full-scale square wave: 0 dBov.
    #expect(AudioLevelMeter.level((0..<960).map { $0 % 2 == 0 ? Int16.max : -Int16.max }) == 0)
    // Amplitude 3277 (~ -20 dB of full scale) as a square wave: 20 -dBov.
    #expect(AudioLevelMeter.level((0..<960).map { $0 % 2 == 0 ? 3277 : -3277 }) == 20)
    // A single LSB of DC: -90.3 dB, rounds to 90.
    #expect(AudioLevelMeter.level([Int16](repeating: 1, count: 960)) == 90)
}

@Test func audioClipHasTwentyMillisecondFramesWithPausesAndSpeech() {
    let frames = SharedAudio.clip.frames
    #expect(frames.count == 300)
    #expect(frames.allSatisfy { $0.duration == .milliseconds(20) && $0.temporalLayer == 0 })
    #expect(SharedAudio.clip.rtpTimestampStep == 960)
    let silent = frames.filter { $0.audioLevel == 127 }.count
    let loud = frames.filter { $0.audioLevel < 40 }.count
    // Pauses are digital silence; syllables are loud.
    #expect(silent > 30)
    #expect(loud > 60)
}

@Test func dtxSuppressesPacketsDuringPausesButSendsTheFirstAndComfortNoise() {
    let frames = SharedAudio.clip.frames
    let dtx = frames.filter(\.isDTXSilence)
    #expect(dtx.count > 20)
    #expect(dtx.allSatisfy { $0.bytes.count <= 2 && $0.audioLevel == 127 })
    // Every frame not sent is a DTX frame right after another DTX frame.
    for i in frames.indices where !frames[i].shouldSend {
        #expect(frames[i].isDTXSilence && i > 0 && frames[i - 1].isDTXSilence)
    }
    // Speech frames are always sent.
    let speechAllSent = frames.filter { $0.audioLevel < 60 }.allSatisfy(\.shouldSend)
    #expect(speechAllSent)
    // Once libopus is in DTX (about 200 ms into a pause), silence costs
    // (almost) nothing: one packet on entry, then only comfort noise.
    let dtxSent = dtx.filter(\.shouldSend).count
    let silent = frames.filter { $0.audioLevel == 127 }
    print("audio clip: \(frames.count) frames, \(silent.count) silent, \(dtx.count) DTX, \(dtxSent) DTX sent")
    #expect(dtxSent * 5 < dtx.count)
}

@Test func packetizedAudioClipDecodesWithoutErrors() throws {
    var packetizer = try OpusPacketizer(
        ssrc: SSRC(5), payloadType: PayloadType(masking: 111), extensionIDs: HeaderExtensionIDs(audioLevel: 1))
    var checker = try OpusStreamChecker()
    var buffer = [UInt8](repeating: 0, count: 1500)
    var twcc: UInt16 = 0
    var sent = 0
    for (i, frame) in SharedAudio.clip.frames.enumerated() {
        var packet: [UInt8] = []
        try buffer.withUnsafeMutableBytes { raw in
            _ = try packetizer.packetize(
                frame, rtpTimestamp: UInt32(i * 960), transportSequenceNumber: &twcc, into: raw
            ) { packet = Array(raw[0..<$0]) }
        }
        guard !packet.isEmpty else { continue }
        sent += 1
        let span = packet.span.bytes
        let header = try RTPHeader(parsing: span)
        let range = header.extensionValueRange(id: 1, in: span)
        let level = try #require(range)
        #expect(packet[level.lowerBound] & 0x7F == frame.audioLevel)
        checker.handle(header, packet: span)
    }
    let stats = checker.statistics
    #expect(stats.packets == sent)
    #expect(stats.packetsDecoded == sent)
    #expect(stats.decodeErrors == 0)
    #expect(stats.packetsLost == 0)
    #expect(stats.samplesDecoded == sent * 960)
    #expect(sent < SharedAudio.clip.frames.count)
}

@Test func opusCheckerConcealsLostPacketsAndCountsBadOnes() throws {
    var packetizer = try OpusPacketizer(ssrc: SSRC(5), payloadType: PayloadType(masking: 111))
    var packets: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0, count: 1500)
    var twcc: UInt16 = 0
    for frame in SharedAudio.clip.frames.filter(\.shouldSend).prefix(20) {
        try buffer.withUnsafeMutableBytes { raw in
            _ = try packetizer.packetize(frame, rtpTimestamp: 0, transportSequenceNumber: &twcc, into: raw) {
                packets.append(Array(raw[0..<$0]))
            }
        }
    }
    packets.removeSubrange(5..<8)
    // A code-3 TOC whose frame count byte says 0 frames: invalid Opus.
    let bad: [UInt8] = [0x80, 0x6F, 0x00, 20, 0, 0, 0, 0, 0, 0, 0, 5, 0x7B, 0x00]
    var checker = try OpusStreamChecker()
    for packet in packets + [bad] {
        let span = packet.span.bytes
        checker.handle(try RTPHeader(parsing: span), packet: span)
    }
    #expect(checker.statistics.packetsLost == 3)
    #expect(checker.statistics.concealedFrames == 3)
    #expect(checker.statistics.packetsDecoded == 17)
    #expect(checker.statistics.decodeErrors == 1)
}
