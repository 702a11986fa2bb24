import Wire

/// The header checks made in Swift before a packet reaches libsrtp, so a
/// malformed or short packet is a typed error decided by bounds-checked
/// reads, never a read past the packet inside C.
enum PacketBounds {
    /// The RTP header length including CSRCs and the header extension
    /// (RFC 3550 sections 5.1 and 5.3.1), checked to lie within `packet`.
    /// This is the part SRTP authenticates but never encrypts (RFC 3711
    /// section 3.1).
    static func rtpHeaderLength(_ packet: UnsafeRawBufferPointer) throws(SRTPError) -> Int {
        var reader = ByteReader(RawSpan(_unsafeBytes: packet))
        let first = try reader.uint8(or: SRTPError.truncated)
        guard first >> 6 == 2 else { throw .badParameter }
        // Marker/PT, sequence number, timestamp, SSRC.
        try reader.skip(11, or: SRTPError.truncated)
        try reader.skip(4 * Int(first & 0x0F), or: SRTPError.truncated)
        if first & 0x10 != 0 {
            try reader.skip(2, or: SRTPError.truncated)  // profile-defined bits
            let words = try reader.uint16(or: SRTPError.truncated)
            try reader.skip(4 * Int(words), or: SRTPError.truncated)
        }
        return reader.offset
    }

    /// The first 8 bytes of an RTCP compound packet: version, packet type,
    /// length and sender SSRC (RFC 3550 section 6.4), which SRTCP leaves in
    /// the clear (RFC 3711 section 3.4).
    static let rtcpHeaderLength = 8

    static func checkRTCPHeader(_ packet: UnsafeRawBufferPointer) throws(SRTPError) {
        var reader = ByteReader(RawSpan(_unsafeBytes: packet))
        let first = try reader.uint8(or: SRTPError.truncated)
        guard first >> 6 == 2 else { throw .badParameter }
        try reader.skip(rtcpHeaderLength - 1, or: SRTPError.truncated)
    }
}
