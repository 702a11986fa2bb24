import Codecs
import Wire

/// A small versioned file format so the app can cache encoded clips on disk
/// and skip the encode at start. All integers big-endian:
///
///     magic "SLVC" | version u8 (2)
///     codec u8 (0 VP8, 1 H.264; absent in version 1, which is VP8)
///     width u16 | height u16 | framesPerSecond u16 | temporalLayers u8
///     keyframeInterval u32 | targetBitrate u64 (bit/s) | frameCount u32
///     frameCount times:
///       flags u8 (bit 0 keyframe, bit 1 layer sync; others 0)
///       temporalLayer u8 | length u32 | length bytes
///
/// The frame duration is 1/framesPerSecond. Parsing is defensive: every
/// count and length is checked against the bytes present before anything
/// is read or allocated, fields are range-checked, and bytes after the
/// last frame are an error.
extension VideoClip {
    static let magic: [UInt8] = Array("SLVC".utf8)
    static let formatVersion: UInt8 = 2
    /// Per-frame overhead in the format.
    static let frameHeaderLength = 6
    /// A VP8 frame larger than this is not one our encoder made.
    package static let maxSerializedFrameLength = 4 << 20

    package func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32 + frames.reduce(0) { $0 + Self.frameHeaderLength + $1.bytes.count })
        out.append(contentsOf: Self.magic)
        out.append(Self.formatVersion)
        out.append(codec == .h264 ? 1 : 0)
        Self.append(UInt64(width), bytes: 2, to: &out)
        Self.append(UInt64(height), bytes: 2, to: &out)
        Self.append(UInt64(framesPerSecond), bytes: 2, to: &out)
        out.append(temporalLayers)
        Self.append(UInt64(keyframeInterval), bytes: 4, to: &out)
        Self.append(UInt64(bitPattern: targetBitrate.bitsPerSecond), bytes: 8, to: &out)
        Self.append(UInt64(frames.count), bytes: 4, to: &out)
        for frame in frames {
            out.append((frame.isKeyframe ? 1 : 0) | (frame.layerSync ? 2 : 0))
            out.append(frame.temporalLayer)
            Self.append(UInt64(frame.bytes.count), bytes: 4, to: &out)
            out.append(contentsOf: frame.bytes)
        }
        return out
    }

    package init(deserializing bytes: RawSpan) throws(BotMediaError) {
        var reader = ByteReader(bytes)
        for expected in Self.magic {
            guard try reader.uint8(or: BotMediaError.truncated) == expected else { throw .badMagic }
        }
        let version = try reader.uint8(or: BotMediaError.truncated)
        guard version == 1 || version == Self.formatVersion else { throw .unsupportedVersion(version) }
        let codec: VideoCodec
        switch version == 1 ? 0 : try reader.uint8(or: BotMediaError.truncated) {
        case 0: codec = .vp8
        case 1: codec = .h264
        default: throw .malformed
        }
        let width = Int(try reader.uint16(or: BotMediaError.truncated))
        let height = Int(try reader.uint16(or: BotMediaError.truncated))
        let fps = Int(try reader.uint16(or: BotMediaError.truncated))
        let layers = try reader.uint8(or: BotMediaError.truncated)
        let interval = Int(try reader.uint32(or: BotMediaError.truncated))
        let bitrate = try reader.uint64(or: BotMediaError.truncated)
        let count = Int(try reader.uint32(or: BotMediaError.truncated))
        guard width > 0, height > 0, (1...120).contains(fps), let pattern = TemporalLayerPattern(layerCount: layers),
            interval > 0, interval % pattern.periodicity == 0, let bits = Int64(exactly: bitrate)
        else { throw .malformed }
        // Each frame takes at least its header plus one byte: a count the
        // rest of the input cannot hold is rejected before reserving.
        guard count <= reader.remaining / (Self.frameHeaderLength + 1) else { throw .truncated }
        var frames: [EncodedFrame] = []
        frames.reserveCapacity(count)
        let duration = Duration.seconds(1) / fps
        for _ in 0..<count {
            let flags = try reader.uint8(or: BotMediaError.truncated)
            let layer = try reader.uint8(or: BotMediaError.truncated)
            let length = Int(try reader.uint32(or: BotMediaError.truncated))
            guard flags & ~0x03 == 0, layer < layers, length > 0, length <= Self.maxSerializedFrameLength else {
                throw .malformed
            }
            let payload = try reader.bytesArray(length, or: BotMediaError.truncated)
            frames.append(
                EncodedFrame(
                    bytes: payload, isKeyframe: flags & 1 != 0, temporalLayer: layer, layerSync: flags & 2 != 0,
                    duration: duration))
        }
        guard reader.isAtEnd else { throw .trailingBytes }
        // A looped clip must restart on a keyframe.
        guard let first = frames.first, first.isKeyframe else { throw .malformed }
        self.init(
            width: width, height: height, framesPerSecond: fps, temporalLayers: layers, keyframeInterval: interval,
            targetBitrate: Bitrate(bitsPerSecond: bits), frames: frames, codec: codec)
    }

    private static func append(_ value: UInt64, bytes: Int, to out: inout [UInt8]) {
        for i in stride(from: bytes - 1, through: 0, by: -1) {
            out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))))
        }
    }
}
