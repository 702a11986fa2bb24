import Wire

/// What an H264 RTP payload carries (RFC 6184 sections 5.6 to 5.8), read
/// from the NAL unit headers in place.
///
/// Every payload starts with a one-byte NAL unit header, F(1) NRI(2)
/// Type(5) (section 5.3). Types 1...23 are a single NAL unit, 24 a STAP-A
/// (units prefixed by 16-bit sizes), 28 an FU-A (a fragment of one unit).
/// STAP-B, MTAP16, MTAP24 and FU-B (25, 26, 27, 29) appear only in
/// interleaved mode, which WebRTC does not use: they are reported as
/// `.unsupported` rather than rejected. Types 0, 30 and 31 are undefined
/// and rejected.
package struct H264PayloadDescriptor: Equatable, Sendable {
    package enum Packetization: Equatable, Sendable {
        /// One NAL unit of the given type (1...23).
        case singleNALUnit(type: UInt8)
        /// Aggregated units, at least one, all sizes checked.
        case stapA(unitCount: Int)
        /// A fragment of one unit of `originalType`.
        case fuA(isStart: Bool, isEnd: Bool, originalType: UInt8)
        /// STAP-B, MTAP16, MTAP24 or FU-B: recognised, not parsed.
        case unsupported(type: UInt8)
    }

    package static let idrType: UInt8 = 5
    package static let spsType: UInt8 = 7
    package static let ppsType: UInt8 = 8
    package static let stapAType: UInt8 = 24
    package static let fuAType: UInt8 = 28

    package var packetization: Packetization
    /// NRI of the payload's first header: 0 means no unit here is used for
    /// reference.
    package var nalReferenceIndicator: UInt8
    /// A unit (or the fragmented unit) is an IDR slice.
    package var containsIDR: Bool
    package var containsSPS: Bool
    package var containsPPS: Bool

    /// The packet starts an IDR picture: a single IDR unit, a STAP-A that
    /// holds one, or the first fragment of one. Parameter sets are
    /// reported separately (`containsSPS`, `containsPPS`); a decoder needs
    /// them too, which a caller checks when it matters.
    package var isKeyframe: Bool {
        if case .fuA(let isStart, _, _) = packetization { return isStart && containsIDR }
        return containsIDR
    }

    package init(parsing payload: RawSpan) throws(CodecParseError) {
        guard payload.byteCount > 0 else { throw .empty }
        let header = payload.byte(at: 0)
        let type = header & 0x1F
        nalReferenceIndicator = (header >> 5) & 0x03
        containsIDR = false
        containsSPS = false
        containsPPS = false
        packetization = .unsupported(type: type)  // replaced below
        switch type {
        case 1...23:
            packetization = .singleNALUnit(type: type)
            note(type)
        case Self.stapAType:
            var units = STAPAUnits()
            var count = 0
            while true {
                let step = units.step(in: payload)
                switch step {
                case .unit(let range):
                    count += 1
                    note(payload.byte(at: range.lowerBound) & 0x1F)
                case .end:
                    guard count > 0 else { throw .truncated }
                    packetization = .stapA(unitCount: count)
                    return
                case .failed(let error):
                    throw error
                }
            }
        case Self.fuAType:
            guard payload.byteCount >= 2 else { throw .truncated }
            let fuHeader = payload.byte(at: 1)
            let isStart = fuHeader & 0x80 != 0
            let isEnd = fuHeader & 0x40 != 0
            guard !(isStart && isEnd) else { throw .invalidFragmentationUnit }
            let original = fuHeader & 0x1F
            packetization = .fuA(isStart: isStart, isEnd: isEnd, originalType: original)
            note(original)
        case 25, 26, 27, 29:
            packetization = .unsupported(type: type)
        default:
            throw .undefinedNALUnitType(type)
        }
    }

    private mutating func note(_ type: UInt8) {
        switch type {
        case Self.idrType: containsIDR = true
        case Self.spsType: containsSPS = true
        case Self.ppsType: containsPPS = true
        default: break
        }
    }

    /// A cursor over the NAL units of a STAP-A payload (RFC 6184 section
    /// 5.7.1): after the STAP-A header byte, each unit is a 16-bit size and
    /// that many bytes. Yields byte ranges of the payload, allocating
    /// nothing; stops at the first unit that does not fit.
    package struct STAPAUnits: Equatable, Sendable {
        var offset = 1
        package init() {}

        enum Step { case unit(Range<Int>), end, failed(CodecParseError) }

        /// The next unit's range (NAL header included), or nil at the end or
        /// at a malformed unit (which the descriptor parse rejects).
        package mutating func next(in payload: RawSpan) -> Range<Int>? {
            if case .unit(let range) = step(in: payload) { return range }
            return nil
        }

        mutating func step(in payload: RawSpan) -> Step {
            let remaining = payload.byteCount - offset
            guard remaining > 0 else { return .end }
            guard remaining >= 2 else { offset = payload.byteCount; return .failed(.truncated) }
            let size = Int(payload.byte(at: offset)) << 8 | Int(payload.byte(at: offset + 1))
            guard size > 0 else { offset = payload.byteCount; return .failed(.emptyAggregationUnit) }
            let start = offset + 2
            guard size <= payload.byteCount - start else { offset = payload.byteCount; return .failed(.truncated) }
            offset = start + size
            return .unit(start..<start + size)
        }
    }
}
