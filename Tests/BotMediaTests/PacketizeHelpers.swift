import BotMedia
import RTP
import Wire

/// Packetizes every frame of `frames` and returns the packets as arrays,
/// with the frame index each came from.
func packetizeVideo(
    _ frames: [EncodedFrame], packetizer: inout VP8Packetizer, timestampStep: UInt32 = 3000,
    captureTime: (Int) -> UInt64? = { _ in nil }
) throws -> [(frame: Int, bytes: [UInt8])] {
    var out: [(frame: Int, bytes: [UInt8])] = []
    var buffer = [UInt8](repeating: 0, count: 1500)
    var twcc: UInt16 = 0
    for (index, frame) in frames.enumerated() {
        try buffer.withUnsafeMutableBytes { raw in
            try packetizer.packetize(
                frame, rtpTimestamp: UInt32(index) &* timestampStep, captureTime: captureTime(index),
                transportSequenceNumber: &twcc, into: raw
            ) { length in out.append((index, Array(raw[0..<length]))) }
        }
    }
    return out
}

/// Feeds packets to an assembler in order; returns the completed frames.
func assemble(
    _ packets: [[UInt8]], into assembler: inout VP8FrameAssembler, start: Instant = .zero,
    spacing: Duration = .milliseconds(1)
) throws -> [VP8FrameAssembler.Frame] {
    var frames: [VP8FrameAssembler.Frame] = []
    var now = start
    for packet in packets {
        let span = packet.span.bytes
        let header = try RTPHeader(parsing: span)
        var next = assembler.handle(header, packet: span, arrival: now)
        while let frame = next {
            frames.append(frame)
            next = assembler.nextFrame()
        }
        now += spacing
    }
    return frames
}
