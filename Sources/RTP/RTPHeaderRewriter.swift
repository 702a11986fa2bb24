import Wire

/// In-place rewrites of an RTP packet's header in a buffer the caller owns,
/// for the forwarding path: no copy, no allocation.
///
/// Fixed-header fields sit at fixed offsets (RFC 3550 section 5.1), so
/// they need only a buffer of at least 12 bytes whose version is 2.
/// Extension values need the `RTPHeader` parsed from the same buffer.
/// Every function checks its bounds and returns `false` instead of
/// trapping; a `false` means the buffer was left unchanged.
package enum RTPHeaderRewriter {
    @inline(__always)
    static func isRTPHeader(_ packet: MutableBytes) -> Bool {
        guard packet.count >= RTPHeader.fixedHeaderLength, let first = packet.load(UInt8.self, at: 0) else { return false }
        return first >> 6 == 2
    }

    @discardableResult
    package static func setSSRC(_ ssrc: SSRC, in packet: MutableBytes) -> Bool {
        isRTPHeader(packet) && packet.store(ssrc.rawValue, at: 8)
    }

    @discardableResult
    package static func setSequenceNumber(_ value: UInt16, in packet: MutableBytes) -> Bool {
        isRTPHeader(packet) && packet.store(value, at: 2)
    }

    @discardableResult
    package static func setTimestamp(_ value: UInt32, in packet: MutableBytes) -> Bool {
        isRTPHeader(packet) && packet.store(value, at: 4)
    }

    /// Sets the payload type and keeps the marker bit.
    @discardableResult
    package static func setPayloadType(_ payloadType: PayloadType, in packet: MutableBytes) -> Bool {
        guard isRTPHeader(packet), let second = packet.load(UInt8.self, at: 1) else { return false }
        return packet.store((second & 0x80) | payloadType.rawValue, at: 1)
    }

    /// Sets the marker bit and keeps the payload type.
    @discardableResult
    package static func setMarker(_ marker: Bool, in packet: MutableBytes) -> Bool {
        guard isRTPHeader(packet), let second = packet.load(UInt8.self, at: 1) else { return false }
        return packet.store((second & 0x7F) | (marker ? 0x80 : 0), at: 1)
    }

    /// The value range of element `id`, looked up in `packet`, which must be
    /// the buffer `header` was parsed from.
    static func valueRange(id: UInt8, header: RTPHeader, in packet: MutableBytes) -> Range<Int>? {
        guard packet.count >= header.packetLength, let ext = header.headerExtension else { return nil }
        let raw = UnsafeRawBufferPointer(packet.base)
        let span = RawSpan(_unsafeBytes: raw)
        guard let range = ext.valueRange(id: id, in: span), range.upperBound <= packet.count else { return nil }
        return range
    }

    /// Overwrites the value of the existing element `id` with `value`, which
    /// must have the element's length (an element never changes size in
    /// place). `header` must come from parsing this same buffer.
    @discardableResult
    package static func overwriteExtensionValue(
        id: UInt8, with value: RawSpan, header: RTPHeader, in packet: MutableBytes
    ) -> Bool {
        guard let range = valueRange(id: id, header: header, in: packet), range.count == value.byteCount else { return false }
        for i in 0..<range.count {
            packet.store(value.byte(at: i), at: range.lowerBound + i)
        }
        return true
    }

    /// Overwrites a 2-byte element, such as the transport-wide sequence
    /// number (draft-holmer-rmcat-transport-wide-cc-extensions-01).
    @discardableResult
    package static func overwriteExtensionValue(
        id: UInt8, uint16 value: UInt16, header: RTPHeader, in packet: MutableBytes
    ) -> Bool {
        guard let range = valueRange(id: id, header: header, in: packet), range.count == 2 else { return false }
        return packet.store(value, at: range.lowerBound)
    }

    /// Overwrites a 3-byte element, such as abs-send-time; the top byte of
    /// `value` is ignored.
    @discardableResult
    package static func overwriteExtensionValue(
        id: UInt8, uint24 value: UInt32, header: RTPHeader, in packet: MutableBytes
    ) -> Bool {
        guard let range = valueRange(id: id, header: header, in: packet), range.count == 3 else { return false }
        return packet.store(UInt8(truncatingIfNeeded: value >> 16), at: range.lowerBound)
            && packet.store(UInt16(truncatingIfNeeded: value), at: range.lowerBound + 1)
    }

    /// Sets the transport-wide sequence number carried in element `id`.
    @discardableResult
    package static func setTransportSequenceNumber(_ value: UInt16, id: UInt8, header: RTPHeader, in packet: MutableBytes) -> Bool
    {
        overwriteExtensionValue(id: id, uint16: value, header: header, in: packet)
    }

    /// Sets the abs-send-time carried in element `id`.
    @discardableResult
    package static func setAbsoluteSendTime(
        _ value: AbsoluteSendTime, id: UInt8, header: RTPHeader, in packet: MutableBytes
    ) -> Bool {
        overwriteExtensionValue(id: id, uint24: value.rawValue, header: header, in: packet)
    }
}
