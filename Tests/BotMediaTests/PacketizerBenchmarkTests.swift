import BotMedia
import RTP
import Testing
import Wire

/// Packetizes (and reassembles) one second of all three simulcast layers
/// and prints the cost per packet. Timing is reported, never asserted: the
/// machine is shared.
@Test func packetizingOneSecondOfThreeLayersReportsNanosecondsPerPacket() throws {
    let clips = try VideoClipPreset.simulcast.map { try VideoClipEncoder.encode($0, seconds: 1) }
    #expect(clips.map(\.frames.count) == [30, 30, 30])
    var buffer = [UInt8](repeating: 0, count: 1500)
    var twcc: UInt16 = 0
    var packetizers = try clips.indices.map { i in
        try VP8Packetizer(
            ssrc: SSRC(UInt32(i + 1)), payloadType: PayloadType(masking: 96),
            extensionIDs: HeaderExtensionIDs(mid: 1, rid: 2, transportSequenceNumber: 3, absCaptureTime: 4),
            mid: "0", rid: RID(["q", "h", "f"][i]))
    }
    var assemblers = clips.map { _ in VP8FrameAssembler(absCaptureTimeID: 4) }
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
                        frame, rtpTimestamp: timestamp, captureTime: UInt64(index), transportSequenceNumber: &twcc,
                        into: raw
                    ) { length in
                        packets += 1
                        bytes += length
                        let span = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: raw[0..<length]))
                        guard let header = try? RTPHeader(parsing: span) else { return }
                        if assemblers[layer].handle(header, packet: span, arrival: .zero) != nil { completed += 1 }
                    }
                }
            }
        }
    }
    let elapsed = clock.now - start
    let perPacket = elapsed / packets
    print(
        "VP8 packetize+parse+assemble: \(packets / rounds) packets/s of video (\(bytes / rounds * 8 / 1000) kbit/s),"
            + " \(perPacket) per packet")
    #expect(completed == rounds * 90)
    #expect(assemblers.allSatisfy { $0.statistics.framesUndecodable == 0 && $0.statistics.packetsLost == 0 })
}
