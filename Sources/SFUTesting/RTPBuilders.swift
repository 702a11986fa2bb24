import Codecs
import RTP
import Wire

/// Ready-made RTP packets for tests of the targets above RTP (streams,
/// forwarding, rooms). Each returns the serialized packet; fields not
/// named take fixed, recognisable defaults.
package enum RTPBuilders {
    /// An RTP packet with the given payload and RFC 8285 extensions
    /// (`(id, value)` pairs; the builder picks one- or two-byte form).
    package static func packet(
        payloadType: UInt8 = 96, sequenceNumber: UInt16 = 1, timestamp: UInt32 = 3000, ssrc: UInt32 = 0x1234_5678,
        marker: Bool = false, csrcs: [UInt32] = [], extensions: [(UInt8, [UInt8])] = [], payload: [UInt8] = [],
        paddingLength: Int = 0
    ) -> [UInt8] {
        let builder = RTPPacketBuilder(
            marker: marker, payloadType: PayloadType(masking: payloadType), sequenceNumber: sequenceNumber,
            timestamp: timestamp, ssrc: SSRC(ssrc), csrcs: csrcs.map { SSRC($0) },
            extensions: extensions.map { RTPPacketBuilder.Extension(id: $0.0, value: $0.1) }, paddingLength: paddingLength)
        do {
            return try builder.build(payload: payload)
        } catch {
            preconditionFailure("test packet does not build: \(error)")
        }
    }

    /// A VP8 payload: descriptor with a 15-bit picture ID, TL0PICIDX and
    /// TID, then a frame tag; on a keyframe, the 10-byte keyframe header
    /// with the given size.
    package static func vp8Payload(
        pictureID: UInt16 = 0x1234, tl0PictureIndex: UInt8 = 0, temporalLayer: UInt8 = 0, layerSync: Bool = false,
        keyframe: Bool = false, startOfPartition: Bool = true, width: UInt16 = 640, height: UInt16 = 360
    ) -> [UInt8] {
        var out: [UInt8] = [
            0x80 | (startOfPartition ? 0x10 : 0),
            0xE0,
            0x80 | UInt8(truncatingIfNeeded: (pictureID >> 8) & 0x7F), UInt8(truncatingIfNeeded: pictureID),
            tl0PictureIndex,
            (temporalLayer & 0x03) << 6 | (layerSync ? 0x20 : 0),
        ]
        if keyframe {
            out += [0x50, 0x42, 0x00, 0x9D, 0x01, 0x2A]
            out += [UInt8(truncatingIfNeeded: width), UInt8(truncatingIfNeeded: width >> 8) & 0x3F]
            out += [UInt8(truncatingIfNeeded: height), UInt8(truncatingIfNeeded: height >> 8) & 0x3F]
        } else {
            out += [0x51, 0x42, 0x00]
        }
        return out + [0xAA, 0xBB]
    }

    /// An Opus payload: TOC for config 31 (CELT fullband 20 ms), code 0,
    /// then `frameBytes` bytes.
    package static func opusPayload(frameBytes: Int = 40) -> [UInt8] {
        [0xF8] + [UInt8](repeating: 0x5A, count: max(0, frameBytes))
    }
}
