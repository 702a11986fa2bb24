import Wire

/// The table-of-contents byte that starts every Opus packet (RFC 6716
/// section 3.1), with the frame count from the packet's framing code
/// (section 3.2). An Opus RTP payload is one Opus packet (RFC 7587
/// section 4.2).
///
///      0 1 2 3 4 5 6 7
///     +-+-+-+-+-+-+-+-+
///     | config  |s| c |
///     +-+-+-+-+-+-+-+-+
package struct OpusTOC: Equatable, Sendable {
    package enum Mode: Equatable, Sendable { case silk, hybrid, celt }
    package enum Bandwidth: Equatable, Sendable {
        case narrowband, mediumband, wideband, superWideband, fullband
    }

    /// config, 0...31 (RFC 6716 table 2).
    package var configuration: UInt8
    package var isStereo: Bool
    /// c, 0...3: one frame, two equal, two different, or an arbitrary count.
    package var frameCountCode: UInt8
    /// Frames in the packet: 1, 2, or for code 3 the M field (1...48).
    package var frameCount: Int
    /// Bytes of the whole packet, TOC included.
    package var packetLength: Int

    /// Longest audio one packet may hold (RFC 6716 section 3.2.5).
    package static let maximumDuration = Duration.milliseconds(120)

    package init(parsing packet: RawSpan) throws(CodecParseError) {
        guard packet.byteCount > 0 else { throw .empty }
        var reader = ByteReader(packet)
        let toc = try reader.uint8(or: CodecParseError.truncated)
        configuration = toc >> 3
        isStereo = toc & 0x04 != 0
        frameCountCode = toc & 0x03
        packetLength = packet.byteCount
        switch frameCountCode {
        case 0:
            frameCount = 1
        case 1:
            // Two frames of equal size: the rest must split evenly.
            guard reader.remaining % 2 == 0 else { throw .invalidFrameLengths }
            frameCount = 2
        case 2:
            frameCount = 2
            guard reader.remaining >= 1 else { throw .truncated }
        default:
            let countByte = try reader.uint8(or: CodecParseError.truncated)
            let m = countByte & 0x3F
            guard m >= 1, m <= 48 else { throw .invalidFrameCount(m) }
            frameCount = Int(m)
        }
        guard frameDurationMicroseconds * frameCount <= 120_000 else { throw .durationTooLong }
    }

    package var mode: Mode {
        switch configuration {
        case 0...11: return .silk
        case 12...15: return .hybrid
        default: return .celt
        }
    }

    package var bandwidth: Bandwidth {
        switch configuration {
        case 0...3: return .narrowband
        case 4...7: return .mediumband
        case 8...11: return .wideband
        case 12...13: return .superWideband
        case 14...15: return .fullband
        case 16...19: return .narrowband
        case 20...23: return .wideband
        case 24...27: return .superWideband
        default: return .fullband
        }
    }

    /// Duration of one frame in microseconds (2500 to 60000).
    package var frameDurationMicroseconds: Int {
        let index = configuration & 0x03
        switch mode {
        case .silk: return index == 0 ? 10_000 : index == 1 ? 20_000 : index == 2 ? 40_000 : 60_000
        case .hybrid: return index & 1 == 0 ? 10_000 : 20_000
        case .celt: return index == 0 ? 2_500 : index == 1 ? 5_000 : index == 2 ? 10_000 : 20_000
        }
    }

    package var frameDuration: Duration { .microseconds(frameDurationMicroseconds) }
    /// Audio in the packet: frame duration times frame count.
    package var packetDuration: Duration { .microseconds(frameDurationMicroseconds * frameCount) }

    /// A hint, not a rule: a packet of at most 2 bytes carries no coded
    /// audio worth forwarding as speech (a TOC-only code 0 packet is an
    /// empty frame; encoders in DTX send such tiny packets between
    /// comfort-noise updates).
    package var isLikelyDTX: Bool { packetLength <= 2 }
}
