import Wire

/// The VP8 payload descriptor at the start of an RTP payload (RFC 7741
/// section 4.2), and what the VP8 payload header after it says about
/// keyframes (section 4.3). Parsed in place; offsets are relative to the
/// start of the RTP payload.
///
///      0 1 2 3 4 5 6 7
///     +-+-+-+-+-+-+-+-+
///     |X|R|N|S|R| PID | (REQUIRED)
///     +-+-+-+-+-+-+-+-+
///     |I|L|T|K| RSV   | (OPTIONAL, when X)
///     |M| PictureID   | (OPTIONAL, when I; a second byte when M)
///     |   TL0PICIDX   | (OPTIONAL, when L)
///     |TID|Y| KEYIDX  | (OPTIONAL, when T or K)
package struct VP8PayloadDescriptor: Equatable, Sendable {
    /// N: the frame can be discarded without affecting any other frame.
    package var isNonReference: Bool
    /// S: the first byte of a VP8 partition.
    package var isStartOfPartition: Bool
    /// PID: the partition index, 0...7.
    package var partitionIndex: UInt8
    /// The picture ID (7 or 15 bits), when I is set.
    package var pictureID: UInt16?
    /// Whether the picture ID takes 15 bits (M set) rather than 7.
    package var hasLongPictureID: Bool
    /// Offset of the picture ID's first byte, when present.
    package var pictureIDOffset: Int?
    /// TL0PICIDX, when L is set.
    package var tl0PictureIndex: UInt8?
    package var tl0PictureIndexOffset: Int?
    /// TID, when T is set: the temporal layer, 0...3.
    package var temporalLayerID: UInt8?
    /// Y: the frame depends only on the base temporal layer (meaningful
    /// when T is set).
    package var isLayerSync: Bool
    /// KEYIDX, when K is set.
    package var keyIndex: UInt8?
    /// Length of the descriptor: where the VP8 payload starts.
    package var payloadHeaderOffset: Int
    /// The packet starts a keyframe: S set, PID 0 and the payload header's
    /// P bit clear (RFC 7741 section 4.3).
    package var isKeyframe: Bool
    /// Frame width and height from the keyframe header (RFC 6386 section
    /// 9.1), when this packet starts a keyframe and carries the 10-byte
    /// header with start code 9d 01 2a. The 2-bit scale fields are dropped.
    package var keyframeWidth: UInt16?
    package var keyframeHeight: UInt16?

    package init(parsing payload: RawSpan) throws(CodecParseError) {
        guard payload.byteCount > 0 else { throw .empty }
        var reader = ByteReader(payload)
        let first = try reader.uint8(or: CodecParseError.truncated)
        let extended = first & 0x80 != 0
        isNonReference = first & 0x20 != 0
        isStartOfPartition = first & 0x10 != 0
        partitionIndex = first & 0x07
        pictureID = nil
        hasLongPictureID = false
        pictureIDOffset = nil
        tl0PictureIndex = nil
        tl0PictureIndexOffset = nil
        temporalLayerID = nil
        isLayerSync = false
        keyIndex = nil
        keyframeWidth = nil
        keyframeHeight = nil

        if extended {
            let flags = try reader.uint8(or: CodecParseError.truncated)
            if flags & 0x80 != 0 {
                pictureIDOffset = reader.offset
                let high = try reader.uint8(or: CodecParseError.truncated)
                if high & 0x80 != 0 {
                    hasLongPictureID = true
                    let low = try reader.uint8(or: CodecParseError.truncated)
                    pictureID = UInt16(high & 0x7F) << 8 | UInt16(low)
                } else {
                    pictureID = UInt16(high)
                }
            }
            if flags & 0x40 != 0 {
                tl0PictureIndexOffset = reader.offset
                tl0PictureIndex = try reader.uint8(or: CodecParseError.truncated)
            }
            let hasTID = flags & 0x20 != 0
            let hasKeyIndex = flags & 0x10 != 0
            if hasTID || hasKeyIndex {
                let b = try reader.uint8(or: CodecParseError.truncated)
                if hasTID {
                    temporalLayerID = b >> 6
                    isLayerSync = b & 0x20 != 0
                }
                if hasKeyIndex { keyIndex = b & 0x1F }
            }
        }
        payloadHeaderOffset = reader.offset

        // The payload header's P bit is meaningful only at the start of the
        // first partition; it needs the 3-byte frame tag to be present.
        isKeyframe = false
        if isStartOfPartition, partitionIndex == 0, reader.remaining >= 3,
            let tag = reader.peekUInt8(), tag & 0x01 == 0
        {
            isKeyframe = true
            if reader.remaining >= 10,
                reader.peekUInt8(at: 3) == 0x9D, reader.peekUInt8(at: 4) == 0x01, reader.peekUInt8(at: 5) == 0x2A,
                let w0 = reader.peekUInt8(at: 6), let w1 = reader.peekUInt8(at: 7),
                let h0 = reader.peekUInt8(at: 8), let h1 = reader.peekUInt8(at: 9)
            {
                // Little-endian 16-bit fields: 14 bits of size, 2 of scale.
                keyframeWidth = (UInt16(w1) << 8 | UInt16(w0)) & 0x3FFF
                keyframeHeight = (UInt16(h1) << 8 | UInt16(h0)) & 0x3FFF
            }
        }
    }

    /// Rewrites the picture ID in place, keeping its width: a 7-bit field
    /// gets `pictureID & 0x7F`, a 15-bit one `pictureID & 0x7FFF` (so a
    /// forwarder must wrap its own counter at the field's modulus).
    /// `payloadOffset` is where the RTP payload starts in `packet`. Returns
    /// false, writing nothing, when the descriptor has no picture ID or the
    /// bytes at that place do not match its M bit.
    @discardableResult
    package func rewritePictureID(_ newValue: UInt16, in packet: MutableBytes, payloadOffset: Int) -> Bool {
        guard let relative = pictureIDOffset else { return false }
        let offset = payloadOffset &+ relative
        guard let current = packet.load(UInt8.self, at: offset), (current & 0x80 != 0) == hasLongPictureID else {
            return false
        }
        if hasLongPictureID {
            return packet.store(0x8000 | (newValue & 0x7FFF), at: offset)
        }
        return packet.store(UInt8(truncatingIfNeeded: newValue) & 0x7F, at: offset)
    }

    /// Rewrites TL0PICIDX in place; false when it is absent or out of
    /// bounds.
    @discardableResult
    package func rewriteTL0PictureIndex(_ newValue: UInt8, in packet: MutableBytes, payloadOffset: Int) -> Bool {
        guard let relative = tl0PictureIndexOffset else { return false }
        return packet.store(newValue, at: payloadOffset &+ relative)
    }

    /// The modulus of the picture ID field: 128 or 32768.
    package var pictureIDModulus: UInt16 { hasLongPictureID ? 0x8000 : 0x80 }
}
