import Wire

/// A cursor over the NAL units of an H.264 byte stream in the Annex B
/// format (H.264 Annex B.1), as encoders write access units: each unit
/// behind a start code `00 00 01`, often with a leading zero byte
/// (`00 00 00 01`, the zero_byte of B.1.1). Yields byte ranges of the
/// units (NAL header included, start codes and trailing zero bytes not),
/// allocating nothing.
///
/// Emulation prevention (H.264 section 7.4.1) guarantees that `00 00 00`,
/// `00 00 01` and `00 00 02` never occur inside a unit, so the next
/// `00 00 01` is the next start code; `00 00 03` sequences are part of the
/// unit and stay in it untouched: RTP carries NAL units with their
/// emulation-prevention bytes (RFC 6184 section 1.3). A unit never ends in
/// a zero byte (its RBSP ends in the stop bit, section 7.3.2.11), so zero
/// bytes before a start code are trailing_zero_8bits and are dropped.
/// Bytes before the first start code are not a unit and are skipped.
package struct AnnexBNALUnits: Equatable, Sendable {
    /// Where the search for the next start code begins.
    var offset = 0

    package init() {}

    /// The next unit's range, or nil when no more units follow.
    package mutating func next(in stream: RawSpan) -> Range<Int>? {
        while true {
            guard let start = Self.startCodeEnd(in: stream, from: offset) else {
                offset = stream.byteCount
                return nil
            }
            let following = Self.startCode(in: stream, from: start) ?? stream.byteCount
            var end = following
            while end > start && stream.byte(at: end - 1) == 0 { end -= 1 }
            offset = following
            if end > start { return start..<end }
        }
    }

    /// The offset of the first `00 00 01` at or after `from`.
    static func startCode(in stream: RawSpan, from: Int) -> Int? {
        var i = from
        let count = stream.byteCount
        while i + 2 < count {
            // Skipping ahead on a byte above 1 keeps the scan at about one
            // comparison per byte: no start code can cover it as its third.
            let third = stream.byte(at: i + 2)
            if third > 1 {
                i += 3
            } else if third == 1 && stream.byte(at: i) == 0 && stream.byte(at: i + 1) == 0 {
                return i
            } else {
                i += 1
            }
        }
        return nil
    }

    /// The offset just after the first start code at or after `from`.
    static func startCodeEnd(in stream: RawSpan, from: Int) -> Int? {
        startCode(in: stream, from: from).map { $0 + 3 }
    }
}
