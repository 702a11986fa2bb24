import Wire

/// The header extensions the SFU itself puts on a forwarded packet, in
/// place of the publisher's: those carry the publisher's negotiated ids,
/// which mean other things (or nothing) to a subscriber, and a receiver
/// that reads one as another can fail (aiortc drops the transport). What
/// the subscriber needs from us is congestion control input: the
/// transport-wide sequence number (draft-holmer-rmcat-transport-wide-cc-
/// extensions-01 section 2) and abs-send-time (the 6.18 fixed-point send
/// time of libwebrtc's REMB), with the ids of our own offer.
package struct EgressHeaderExtensions: Equatable, Sendable {
    /// Id and value of the transport-wide sequence number, if negotiated.
    package var transportSequenceNumber: (id: UInt8, value: UInt16)?
    /// Id and 24-bit value of abs-send-time, if negotiated.
    package var absoluteSendTime: (id: UInt8, value: UInt32)?
    /// Id and value of abs-capture-time, passed through from the publisher:
    /// the 64-bit NTP capture timestamp and, when the publisher sent it,
    /// the estimated capture clock offset (signed Q32.32).
    package var absoluteCaptureTime: (id: UInt8, timestamp: UInt64, clockOffset: Int64?)?

    package init(
        transportSequenceNumber: (id: UInt8, value: UInt16)? = nil, absoluteSendTime: (id: UInt8, value: UInt32)? = nil,
        absoluteCaptureTime: (id: UInt8, timestamp: UInt64, clockOffset: Int64?)? = nil
    ) {
        self.transportSequenceNumber = transportSequenceNumber
        self.absoluteSendTime = absoluteSendTime
        self.absoluteCaptureTime = absoluteCaptureTime
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.transportSequenceNumber?.id == b.transportSequenceNumber?.id
            && a.transportSequenceNumber?.value == b.transportSequenceNumber?.value
            && a.absoluteSendTime?.id == b.absoluteSendTime?.id && a.absoluteSendTime?.value == b.absoluteSendTime?.value
            && a.absoluteCaptureTime?.id == b.absoluteCaptureTime?.id
            && a.absoluteCaptureTime?.timestamp == b.absoluteCaptureTime?.timestamp
            && a.absoluteCaptureTime?.clockOffset == b.absoluteCaptureTime?.clockOffset
    }

    /// Reads an abs-capture-time value (8 or 16 bytes) at `range` of
    /// `bytes`; nil for any other length.
    package static func absoluteCaptureTime(
        in bytes: RawSpan, range: Range<Int>
    ) -> (
        timestamp: UInt64, clockOffset: Int64?
    )? {
        guard range.count == 8 || range.count == 16, range.lowerBound >= 0, range.upperBound <= bytes.byteCount else {
            return nil
        }
        func word(at offset: Int) -> UInt64 {
            var v: UInt64 = 0
            for i in 0..<8 { v = v << 8 | UInt64(bytes.unsafeLoad(fromByteOffset: offset + i, as: UInt8.self)) }
            return v
        }
        let timestamp = word(at: range.lowerBound)
        let offset = range.count == 16 ? Int64(bitPattern: word(at: range.lowerBound + 8)) : nil
        return (timestamp, offset)
    }

    /// Bytes of the one-byte-header block (RFC 8285 section 4.2) these
    /// elements take, with its 4-byte header and padding to 32 bits; 0 when
    /// there are none.
    package var blockLength: Int {
        var data = 0
        if transportSequenceNumber != nil { data += 3 }
        if absoluteSendTime != nil { data += 4 }
        if let c = absoluteCaptureTime { data += c.clockOffset == nil ? 9 : 17 }
        return data == 0 ? 0 : 4 + (data + 3) / 4 * 4
    }

    /// Replaces the header extension block of the RTP packet in
    /// `buffer[0..<length]` (parsed as `header`) with these elements,
    /// moving the payload (and padding) as needed; with no elements the
    /// block is removed and the X bit cleared. Returns the new length, or
    /// nil (buffer unchanged) when the packet does not match `header`, an
    /// id is outside 1...14, or the buffer has no room.
    package func write(into buffer: UnsafeMutableRawBufferPointer, length: Int, header: RTPHeader) -> Int? {
        guard let base = buffer.baseAddress, length <= buffer.count, let layout = layout(length: length, header: header)
        else { return nil }
        let newLength = layout.blockStart + layout.newBlock + layout.rest
        guard newLength <= buffer.count else { return nil }
        if layout.rest > 0 {
            (base + layout.blockStart + layout.newBlock).copyMemory(from: base + layout.oldEnd, byteCount: layout.rest)
        }
        writeBlock(into: buffer, at: layout.blockStart, length: layout.newBlock)
        return newLength
    }

    /// The same result as copying `packet` (parsed as `header`) into
    /// `buffer` and calling `write`, with every byte copied once: the
    /// fixed header and CSRCs, then the payload and padding straight to
    /// their place after our block (a forwarded packet's payload is copied
    /// once on egress). Nil (buffer unspecified) when `write` would fail.
    package func copy(_ packet: UnsafeRawBufferPointer, header: RTPHeader, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard let base = buffer.baseAddress, let source = packet.baseAddress,
            let layout = layout(length: packet.count, header: header)
        else { return nil }
        let newLength = layout.blockStart + layout.newBlock + layout.rest
        guard newLength <= buffer.count else { return nil }
        base.copyMemory(from: source, byteCount: layout.blockStart)
        if layout.rest > 0 {
            (base + layout.blockStart + layout.newBlock).copyMemory(from: source + layout.oldEnd, byteCount: layout.rest)
        }
        writeBlock(into: buffer, at: layout.blockStart, length: layout.newBlock)
        return newLength
    }

    /// Where the old block is and what follows it, or nil when the packet
    /// does not match `header` or an id is outside 1...14.
    private func layout(length: Int, header: RTPHeader) -> (blockStart: Int, oldEnd: Int, newBlock: Int, rest: Int)? {
        guard header.packetLength == length, length >= RTPHeader.fixedHeaderLength else { return nil }
        for id in [transportSequenceNumber?.id, absoluteSendTime?.id, absoluteCaptureTime?.id] {
            if let id, !(1...14).contains(id) { return nil }
        }
        let blockStart = RTPHeader.fixedHeaderLength + 4 * header.csrcCount
        let oldEnd = header.headerExtension?.dataRange.upperBound ?? blockStart
        guard blockStart <= oldEnd, oldEnd <= header.payloadOffset, header.payloadOffset <= length else { return nil }
        return (blockStart, oldEnd, blockLength, length - oldEnd)
    }

    /// Our block (`length` bytes, `blockLength`) at `blockStart`, and the
    /// X bit; with no elements, only the X bit cleared.
    private func writeBlock(into buffer: UnsafeMutableRawBufferPointer, at blockStart: Int, length newBlock: Int) {
        let first = buffer[0]
        guard newBlock > 0 else {
            buffer[0] = first & ~0x10
            return
        }
        buffer[0] = first | 0x10
        var at = blockStart
        func put(_ byte: UInt8) {
            buffer[at] = byte
            at += 1
        }
        put(0xBE)
        put(0xDE)
        let words = (newBlock - 4) / 4
        put(UInt8(truncatingIfNeeded: words >> 8))
        put(UInt8(truncatingIfNeeded: words))
        if let t = transportSequenceNumber {
            put(t.id << 4 | 1)  // L = length - 1
            put(UInt8(truncatingIfNeeded: t.value >> 8))
            put(UInt8(truncatingIfNeeded: t.value))
        }
        if let a = absoluteSendTime {
            put(a.id << 4 | 2)
            put(UInt8(truncatingIfNeeded: a.value >> 16))
            put(UInt8(truncatingIfNeeded: a.value >> 8))
            put(UInt8(truncatingIfNeeded: a.value))
        }
        if let c = absoluteCaptureTime {
            put(c.id << 4 | (c.clockOffset == nil ? 7 : 15))
            for shift in stride(from: 56, through: 0, by: -8) { put(UInt8(truncatingIfNeeded: c.timestamp >> UInt64(shift))) }
            if let offset = c.clockOffset {
                let bits = UInt64(bitPattern: offset)
                for shift in stride(from: 56, through: 0, by: -8) { put(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
            }
        }
        while at < blockStart + newBlock { put(0) }  // padding (RFC 8285 section 4.2)
    }
}
