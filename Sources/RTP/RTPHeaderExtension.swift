import Wire

/// The header extension block of an RTP packet (RFC 3550 section 5.3.1),
/// as offsets into the packet.
///
/// With profile 0xBEDE the block holds RFC 8285 one-byte elements
/// (section 4.2); with 0x100 in the top 12 bits it holds two-byte elements
/// (section 4.3) and the low 4 bits are "appbits". Any other profile is
/// kept opaque: its bytes are `dataRange` and no elements are read.
package struct RTPHeaderExtension: Equatable, Sendable {
    /// The 16-bit "defined by profile" field.
    package var profile: UInt16
    /// The extension data after the 4-byte extension header, a multiple of
    /// 4 bytes long.
    package var dataRange: Range<Int>

    package init(profile: UInt16, dataRange: Range<Int>) {
        self.profile = profile
        self.dataRange = dataRange
    }

    package static let oneByteProfile: UInt16 = 0xBEDE
    /// Two-byte profiles are 0x1000...0x100F.
    package static let twoByteProfileMask: UInt16 = 0xFFF0
    package static let twoByteProfile: UInt16 = 0x1000

    package var form: Form {
        if profile == Self.oneByteProfile { return .oneByte }
        if profile & Self.twoByteProfileMask == Self.twoByteProfile {
            return .twoByte(appBits: UInt8(profile & 0x0F))
        }
        return .opaque(profile: profile)
    }

    /// Offset of the 4-byte extension header (profile and length).
    package var headerOffset: Int { dataRange.lowerBound - 4 }

    package enum Form: Equatable, Sendable {
        case oneByte
        case twoByte(appBits: UInt8)
        case opaque(profile: UInt16)
    }

    /// A cursor over the elements; call `next(in:)` with the same packet
    /// bytes until it returns nil. Opaque profiles yield nothing.
    package func elements() -> Elements {
        switch form {
        case .oneByte: return Elements(offset: dataRange.lowerBound, end: dataRange.upperBound, twoByte: false)
        case .twoByte: return Elements(offset: dataRange.lowerBound, end: dataRange.upperBound, twoByte: true)
        case .opaque: return Elements(offset: dataRange.upperBound, end: dataRange.upperBound, twoByte: false)
        }
    }

    /// The value range of the first element with `id`.
    package func valueRange(id: UInt8, in bytes: RawSpan) -> Range<Int>? {
        var cursor = elements()
        while true {
            switch cursor.step(in: bytes) {
            case .element(let elementID, let range): if elementID == id { return range }
            case .end, .malformed: return nil
            }
        }
    }

    /// Throws when an element runs past the block; run once at parse time
    /// so that later lookups see a well-formed block.
    func validateElements(in bytes: RawSpan) throws(RTPParseError) {
        guard dataRange.upperBound <= bytes.byteCount else { throw .truncated }
        var cursor = elements()
        while true {
            switch cursor.step(in: bytes) {
            case .element: continue
            case .end: return
            case .malformed: throw .malformedExtension
            }
        }
    }

    /// One RFC 8285 element: its local identifier and value bytes.
    package struct Element: Equatable, Sendable {
        package var id: UInt8
        package var valueRange: Range<Int>
    }

    /// Walks RFC 8285 elements without allocating.
    ///
    /// Rules (RFC 8285 sections 4.2 and 4.3): a zero byte (one-byte form:
    /// ID 0) where an element would start is padding and is skipped; in the one-byte form, ID 15
    /// ends processing and its length is ignored; the one-byte length field
    /// is the value length minus one (1...16 bytes), the two-byte one the
    /// value length itself (0...255 bytes). An element whose value would
    /// run past the block makes the block malformed.
    package struct Elements: Equatable, Sendable {
        var offset: Int
        let end: Int
        let twoByte: Bool

        enum Step { case element(UInt8, Range<Int>), end, malformed }

        /// The next element, or nil at the end of the block (or on a
        /// malformed element, which `RTPHeader` has already rejected).
        package mutating func next(in bytes: RawSpan) -> Element? {
            if case .element(let id, let range) = step(in: bytes) { return Element(id: id, valueRange: range) }
            return nil
        }

        mutating func step(in bytes: RawSpan) -> Step {
            let limit = min(end, bytes.byteCount)
            while offset < limit {
                let first = bytes.byte(at: offset)
                // Padding: a zero byte, or in the one-byte form any byte with
                // ID 0 (its length is ignored, as libwebrtc does).
                if first == 0 || (!twoByte && first >> 4 == 0) {
                    offset += 1
                    continue
                }
                let id: UInt8
                let length: Int
                let valueStart: Int
                if twoByte {
                    guard offset + 1 < limit else { offset = limit; return .malformed }
                    id = first
                    length = Int(bytes.byte(at: offset + 1))
                    valueStart = offset + 2
                } else {
                    id = first >> 4
                    if id == 15 { offset = limit; return .end }
                    length = Int(first & 0x0F) + 1
                    valueStart = offset + 1
                }
                guard valueStart + length <= limit else { offset = limit; return .malformed }
                offset = valueStart + length
                return .element(id, valueStart..<valueStart + length)
            }
            return .end
        }
    }
}
