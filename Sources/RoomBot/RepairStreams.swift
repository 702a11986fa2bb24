import Negotiation
import RTP
import Wire

/// The repair streams a subscribing bot was announced and what each one
/// repairs: `a=ssrc-group:FID <media> <rtx>` (RFC 5576 section 4.2) names
/// the SSRCs, and the accepted codec's `apt` pairing (RFC 4588 section 8.1)
/// the payload type a restored packet takes back.
///
/// Restoring is the one `RTXPacket.restore` the server uses on what
/// publishers send it, so server and bot agree on what an RTX packet is
/// (RFC 4588 section 4: the OSN leaves, the RTX packet's own padding is
/// dropped, header and extensions stay).
struct RepairStreams {
    /// What `restore` made of a packet.
    enum Restored {
        /// Not on a repair stream: use the packet as it came.
        case media
        /// The original packet, restored in place at the buffer's start.
        case original(UnsafeRawBufferPointer, RTPHeader)
        /// A repair-stream packet with nothing to restore (a padding-only
        /// probe, an OSN and no payload, or a malformed packet).
        case nothing
    }

    private var repaired: [SSRC: (ssrc: SSRC, payloadType: PayloadType)] = [:]

    /// Forgets earlier announcements: the subscriber offer lists every
    /// track the bot receives.
    mutating func announce(_ tracks: [AnnouncedTrack]) {
        repaired = [:]
        for track in tracks {
            guard let ssrc = track.ssrc, let rtx = track.rtxSSRC else { continue }
            repaired[rtx] = (ssrc, track.codec.payloadType)
        }
    }

    /// Restores, in place, a packet received on a repair stream.
    func restore(_ bytes: UnsafeMutableRawBufferPointer, header: RTPHeader) -> Restored {
        guard let original = repaired[header.ssrc] else { return .media }
        guard
            let restored = RTXPacket.restore(
                in: bytes, length: bytes.count, originalSSRC: original.ssrc, originalPayloadType: original.payloadType)
        else { return .nothing }
        return .original(UnsafeRawBufferPointer(rebasing: bytes[0..<restored.length]), restored.header)
    }
}
