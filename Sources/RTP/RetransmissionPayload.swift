import Wire

/// The RTP retransmission payload format (RFC 4588 section 4), applied in
/// place to a buffer the caller owns.
///
///      0                   1                   2                   3
///      0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |                         RTP Header                            |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///     |            OSN                |                               |
///     +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               |
///     |                  Original RTP Packet Payload                  |
///
/// A retransmission packet keeps the original's timestamp, marker bit,
/// CSRC list and header extensions (section 4); it takes the repair
/// stream's SSRC, its own sequence number and the RTX payload type, and
/// carries the original sequence number (OSN) as the first two payload
/// bytes.
///
/// Padding: section 4 says padding of the original packet is removed
/// before the retransmission packet is built; the retransmission packet
/// may have padding of its own, which belongs to it alone. So `wrap` drops
/// the original's padding (clearing the P bit) and `unwrap` drops the RTX
/// packet's padding: wrap then unwrap gives back the original without its
/// padding, byte for byte otherwise.
///
/// Every function parses the header first with `RTPHeader(parsing:)`,
/// checks that the result fits `slot`, and returns nil (leaving the slot
/// as it was) rather than trapping on a malformed packet.
package enum RTXPacket {
    /// Length of the original sequence number field.
    package static let originalSequenceNumberLength = 2

    /// Turns the RTP packet held in `slot[0..<length]` into its
    /// retransmission packet, in place. Returns the new length: `length`
    /// plus 2, minus the original padding. Fails (nil, slot unchanged) when
    /// `length` is out of the slot, the packet does not parse, or the slot
    /// has no room for the 2 extra bytes.
    package static func wrap(
        in slot: UnsafeMutableRawBufferPointer, length: Int, rtxSSRC: SSRC, rtxSequenceNumber: UInt16,
        rtxPayloadType: PayloadType
    ) -> Int? {
        guard let header = parse(slot, length: length) else { return nil }
        let payloadStart = header.payloadOffset
        let payloadLength = header.payloadLength
        let newLength = payloadStart + originalSequenceNumberLength + payloadLength
        guard newLength <= slot.count, let base = slot.baseAddress else { return nil }
        // Overlapping move of the payload 2 bytes to the right (memmove).
        if payloadLength > 0 {
            (base + payloadStart + originalSequenceNumberLength).copyMemory(
                from: base + payloadStart, byteCount: payloadLength)
        }
        let bytes = MutableBytes(slot)
        bytes.store(header.sequenceNumber, at: payloadStart)
        if header.hasPadding { clearPaddingBit(bytes) }
        RTPHeaderRewriter.setSSRC(rtxSSRC, in: bytes)
        RTPHeaderRewriter.setSequenceNumber(rtxSequenceNumber, in: bytes)
        RTPHeaderRewriter.setPayloadType(rtxPayloadType, in: bytes)
        return newLength
    }

    /// Restores, in place, the original packet from the retransmission
    /// packet held in `slot[0..<length]` (one received from a publisher in
    /// answer to our NACK). Returns the original's length and sequence
    /// number; the RTX packet's own padding is dropped. Fails (nil, slot
    /// unchanged) when the packet does not parse or its payload is shorter
    /// than the OSN (a padding-only probe has nothing to restore).
    package static func unwrap(
        in slot: UnsafeMutableRawBufferPointer, length: Int, originalSSRC: SSRC, originalPayloadType: PayloadType
    ) -> (length: Int, originalSequenceNumber: UInt16)? {
        guard let header = parse(slot, length: length),
            header.payloadLength >= originalSequenceNumberLength,
            let base = slot.baseAddress
        else { return nil }
        let bytes = MutableBytes(slot)
        guard let osn = bytes.load(UInt16.self, at: header.payloadOffset) else { return nil }
        let originalPayloadLength = header.payloadLength - originalSequenceNumberLength
        if originalPayloadLength > 0 {
            (base + header.payloadOffset).copyMemory(
                from: base + header.payloadOffset + originalSequenceNumberLength, byteCount: originalPayloadLength)
        }
        if header.hasPadding { clearPaddingBit(bytes) }
        RTPHeaderRewriter.setSSRC(originalSSRC, in: bytes)
        RTPHeaderRewriter.setSequenceNumber(osn, in: bytes)
        RTPHeaderRewriter.setPayloadType(originalPayloadType, in: bytes)
        return (header.payloadOffset + originalPayloadLength, osn)
    }

    /// `unwrap`, then the restored packet's header: what a receiver of a
    /// repair stream (the server from publishers, roombot from the server)
    /// continues with. Nil when there is nothing to restore: a padding-only
    /// probe, an OSN without payload, or a packet that does not parse.
    package static func restore(
        in slot: UnsafeMutableRawBufferPointer, length: Int, originalSSRC: SSRC, originalPayloadType: PayloadType
    ) -> (length: Int, header: RTPHeader)? {
        guard
            let restored = unwrap(
                in: slot, length: length, originalSSRC: originalSSRC, originalPayloadType: originalPayloadType),
            let header = try? RTPHeader(
                parsing: RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: slot[0..<restored.length]))),
            header.payloadLength > 0
        else { return nil }
        return (restored.length, header)
    }

    /// The range of padding sizes one packet can carry: the count byte is
    /// 8 bits and counts itself (RFC 3550 section 5.1).
    package static let paddingRange = 1...255

    /// Writes a padding-only packet on the repair stream into `slot`: a
    /// 12-byte header with the P bit set, no payload, no OSN, and
    /// `paddingBytes` of padding whose last byte is the count (RFC 3550
    /// section 5.1). Senders use these as bandwidth probes (libwebrtc
    /// probes with RTX padding); receivers drop them after SRTP. Returns
    /// the packet length, or nil when `paddingBytes` is outside 1...255 or
    /// the slot is too small.
    package static func makePadding(
        in slot: UnsafeMutableRawBufferPointer, rtxSSRC: SSRC, sequenceNumber: UInt16, payloadType: PayloadType,
        timestamp: UInt32, paddingBytes: Int
    ) -> Int? {
        guard paddingRange.contains(paddingBytes) else { return nil }
        let length = RTPHeader.fixedHeaderLength + paddingBytes
        guard length <= slot.count else { return nil }
        let bytes = MutableBytes(slot)
        bytes.store(UInt8(0x80 | 0x20), at: 0)  // V=2, P=1, X=0, CC=0
        bytes.store(payloadType.rawValue, at: 1)  // M=0
        bytes.store(sequenceNumber, at: 2)
        bytes.store(timestamp, at: 4)
        bytes.store(rtxSSRC.rawValue, at: 8)
        for offset in RTPHeader.fixedHeaderLength..<(length - 1) { bytes.store(UInt8(0), at: offset) }
        bytes.store(UInt8(truncatingIfNeeded: paddingBytes), at: length - 1)
        return length
    }

    /// The original sequence number of a parsed retransmission packet, or
    /// nil when its payload is shorter than the OSN (padding-only).
    package static func originalSequenceNumber(header: RTPHeader, in bytes: RawSpan) -> UInt16? {
        guard header.payloadLength >= originalSequenceNumberLength,
            header.payloadOffset + originalSequenceNumberLength <= bytes.byteCount
        else { return nil }
        var reader = ByteReader(bytes, offset: header.payloadOffset)
        return try? reader.uint16(or: RTPParseError.truncated)
    }

    private static func parse(_ slot: UnsafeMutableRawBufferPointer, length: Int) -> RTPHeader? {
        guard length >= 0, length <= slot.count else { return nil }
        let packet = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(slot)[0..<length])
        return try? RTPHeader(parsing: RawSpan(_unsafeBytes: packet))
    }

    private static func clearPaddingBit(_ bytes: MutableBytes) {
        if let first = bytes.load(UInt8.self, at: 0) { bytes.store(first & ~0x20, at: 0) }
    }
}
