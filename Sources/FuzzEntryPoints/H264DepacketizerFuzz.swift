import BotMedia
import RTP
import Wire

extension FuzzEntryPoints {
    /// Runs roombot's H.264 depacketizer (`H264FrameAssembler`) over a
    /// stream of RTP packets described by the input, so the fuzzer works on
    /// the payloads: each chunk is a control byte (bit 7 marker, bit 6 next
    /// timestamp, bit 5 another SSRC, bits 0-2 sequence numbers skipped), a
    /// length byte and that many payload bytes (fewer at the end). The
    /// frame buffer holds 4 KiB, so large frames are refused too. Checks:
    /// a completed frame's bytes lie in the buffer and, when decodable,
    /// start with a start code; counts stay consistent with the packets.
    public static func h264Depacketizer(_ data: UnsafeRawBufferPointer) {
        var assembler = H264FrameAssembler(absCaptureTimeID: 1, reassemblyCapacity: 4096)
        var packet = [UInt8](repeating: 0, count: 12 + 255)
        var offset = 0
        var sequence: UInt16 = 0xFFF0
        var timestamp: UInt32 = 0
        var ssrc: UInt8 = 1
        var fed = 0
        while offset + 2 <= data.count {
            let control = data[offset]
            let length = min(Int(data[offset + 1]), data.count - offset - 2)
            sequence &+= 1 &+ UInt16(control & 0x07)
            if control & 0x40 != 0 { timestamp &+= 3000 }
            if control & 0x20 != 0 { ssrc &+= 1 }
            packet[0] = 0x80
            packet[1] = (control & 0x80) | 96
            packet[2] = UInt8(sequence >> 8)
            packet[3] = UInt8(truncatingIfNeeded: sequence)
            for i in 0..<4 { packet[4 + i] = UInt8(truncatingIfNeeded: timestamp >> (24 - 8 * UInt32(i))) }
            packet[8] = 0
            packet[9] = 0
            packet[10] = 0
            packet[11] = ssrc
            for i in 0..<length { packet[12 + i] = data[offset + 2 + i] }
            offset += 2 + length
            let bytes = packet[0..<12 + length]
            let frame: H264FrameAssembler.Frame? = bytes.withUnsafeBytes { raw in
                let span = RawSpan(_unsafeBytes: raw)
                guard let header = try? RTPHeader(parsing: span) else { return nil }
                return assembler.handle(header, packet: span, arrival: .zero)
            }
            fed += 1
            guard let frame else { continue }
            precondition(frame.byteCount <= assembler.frameBuffer.count)
            precondition(frame.packetCount >= 1 && frame.packetCount <= fed)
            if frame.isDecodable {
                precondition(frame.byteCount >= 5)
                precondition(assembler.frameBuffer[0..<4] == [0, 0, 0, 1])
            } else {
                precondition(frame.byteCount == 0)
            }
        }
        let s = assembler.statistics
        precondition(s.packets == fed)
        precondition(s.keyframes <= s.framesComplete && s.framesUndecodable <= s.framesComplete)
        precondition(s.malformedPackets + s.unsupportedPackets + s.packetsOutOfOrder <= s.packets)
    }
}
