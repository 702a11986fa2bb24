import Codecs
import RTP
import Testing
import Wire

@testable import BotMedia

/// Packetizes (and reassembles) one second of all three simulcast layers
/// and prints the cost per packet, for VP8 (RFC 7741) and H.264 (RFC 6184
/// mode 1: Annex B access units rebuilt, no decoding). Timing is reported,
/// never asserted: the machine is shared.
@Test(arguments: [VideoCodec.vp8, .h264])
func packetizingOneSecondOfThreeLayersReportsNanosecondsPerPacket(codec: VideoCodec) throws {
    let clips = try VideoClipPreset.simulcast.map {
        codec == .h264
            ? try VideoClipEncoder.encode($0.forH264, seconds: 1, codec: .h264) : try VideoClipEncoder.encode($0, seconds: 1)
    }
    #expect(clips.map(\.frames.count) == [30, 30, 30])
    var buffer = [UInt8](repeating: 0, count: 1500)
    var twcc: UInt16 = 0
    var packetizers = try clips.indices.map { i in
        try VideoPacketizer(
            codec: codec, ssrc: SSRC(UInt32(i + 1)), payloadType: PayloadType(masking: 96),
            extensionIDs: HeaderExtensionIDs(mid: 1, rtpStreamID: 2, transportWideSequenceNumber: 3, absoluteCaptureTime: 4),
            mid: "0", rid: RID(["q", "h", "f"][i]), initialSequenceNumber: 0, initialPictureID: 0)
    }
    var vp8 = clips.map { _ in VP8FrameAssembler(absCaptureTimeID: 4) }
    var h264 = clips.map { _ in H264FrameAssembler(absCaptureTimeID: 4) }
    var packets = 0
    var bytes = 0
    var completed = 0
    let rounds = 20
    let clock = ContinuousClock()
    let start = clock.now
    for round in 0..<rounds {
        for layer in clips.indices {
            for (index, frame) in clips[layer].frames.enumerated() {
                let timestamp = UInt32(round * 30 + index) &* 3000
                try buffer.withUnsafeMutableBytes { raw in
                    try packetizers[layer].packetize(
                        frame, rtpTimestamp: timestamp, captureTime: UInt64(index), absSendTime: nil,
                        transportSequenceNumber: &twcc, into: raw
                    ) { length in
                        packets += 1
                        bytes += length
                        let span = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: raw[0..<length]))
                        guard let header = try? RTPHeader(parsing: span) else { return }
                        let done =
                            codec == .h264
                            ? h264[layer].handle(header, packet: span, arrival: .zero) != nil
                            : vp8[layer].handle(header, packet: span, arrival: .zero) != nil
                        if done { completed += 1 }
                    }
                }
            }
        }
    }
    let elapsed = clock.now - start
    let perPacket = elapsed / packets
    print(
        "\(codec) packetize+parse+assemble: \(packets / rounds) packets/s of video (\(bytes / rounds * 8 / 1000) kbit/s),"
            + " \(perPacket) per packet")
    #expect(completed == rounds * 90)
    let clean =
        codec == .h264
        ? h264.allSatisfy { $0.statistics.framesUndecodable == 0 && $0.statistics.packetsLost == 0 }
        : vp8.allSatisfy { $0.statistics.framesUndecodable == 0 && $0.statistics.packetsLost == 0 }
    #expect(clean)
}

/// What an H.264 subscriber pays per frame to decode (roombot decodes
/// every H.264 frame it shows): one second of each layer through
/// libopenh264. Reported, not asserted.
@Test func decodingOneSecondOfEachH264LayerReportsTimePerFrame() throws {
    for preset in VideoClipPreset.simulcast {
        let clip = try VideoClipEncoder.encode(preset.forH264, seconds: 1, codec: .h264)
        var decoder = try H264Decoder()
        let clock = ContinuousClock()
        let start = clock.now
        var pictures = 0
        for frame in clip.frames where try decoder.decode(frame.bytes.span.bytes) != nil { pictures += 1 }
        let elapsed = clock.now - start
        print("H.264 decode \(preset.width)x\(preset.height): \(elapsed / clip.frames.count) per frame")
        #expect(pictures == clip.frames.count)
    }
}
