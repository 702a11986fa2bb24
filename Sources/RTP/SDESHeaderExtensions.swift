import Wire

// The SDES items carried as header extensions to route a packet before any
// RTCP arrives: `sdes:mid` (RFC 9143 section 15), `sdes:rtp-stream-id` and
// `sdes:repaired-rtp-stream-id` (RFC 8852 section 3). Each value is the
// identifier's ASCII bytes, 1 to 16 of them in the one-byte form. Values
// are kept inline in a `ShortToken`; an empty or longer value is rejected
// (nil), which drops the identifier, not the packet.

extension MID {
    /// Reads an `sdes:mid` element value.
    package init?(extensionValue value: RawSpan) {
        guard let token = ShortToken(bytes: value) else { return nil }
        self.init(token)
    }
}

extension RID {
    /// Reads an `sdes:rtp-stream-id` or `sdes:repaired-rtp-stream-id`
    /// element value.
    package init?(extensionValue value: RawSpan) {
        guard let token = ShortToken(bytes: value) else { return nil }
        self.init(token)
    }
}

extension RTPHeader {
    /// The value bytes of element `id`, as a span over `bytes`.
    @_lifetime(copy bytes)
    package func extensionValue(id: UInt8, in bytes: RawSpan) -> RawSpan? {
        guard let range = extensionValueRange(id: id, in: bytes), range.upperBound <= bytes.byteCount else { return nil }
        return bytes.extracting(range)
    }

    /// The `sdes:mid` in element `id`, if present and valid.
    package func mid(id: UInt8, in bytes: RawSpan) -> MID? {
        guard let value = extensionValue(id: id, in: bytes) else { return nil }
        return MID(extensionValue: value)
    }

    /// The rid (or repaired rid) in element `id`, if present and valid.
    package func rid(id: UInt8, in bytes: RawSpan) -> RID? {
        guard let value = extensionValue(id: id, in: bytes) else { return nil }
        return RID(extensionValue: value)
    }
}
