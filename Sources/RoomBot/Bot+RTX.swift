import Negotiation
import RTP
import Wire

extension Bot {
    /// RFC 4588 section 4: the original packet is the RTX packet without
    /// its first two payload bytes (the original sequence number), with
    /// the original SSRC. Rewritten in place: the header moves up two
    /// bytes over the OSN. Nil for a packet with no OSN (padding probes).
    static func unwrapRTX(_ bytes: UnsafeMutableRawBufferPointer, header: RTPHeader, ssrc: SSRC) -> UnsafeRawBufferPointer? {
        let offset = header.payloadOffset
        guard header.payloadLength > 2, offset + 2 <= bytes.count, header.packetLength <= bytes.count else { return nil }
        let sequence = UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
        guard let base = bytes.baseAddress else { return nil }
        (base + 2).copyMemory(from: base, byteCount: offset)
        let packet = UnsafeMutableRawBufferPointer(rebasing: bytes[2..<header.packetLength])
        let out = MutableBytes(packet)
        _ = out.store(sequence, at: 2)
        _ = out.store(ssrc.rawValue, at: 8)
        _ = out.store((packet[1] & 0x80) | ClientOfferBuilder.videoPayloadType.rawValue, at: 1)
        return UnsafeRawBufferPointer(packet)
    }
}
