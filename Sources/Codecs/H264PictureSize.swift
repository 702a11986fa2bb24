import Wire

/// The picture size an H.264 sequence parameter set declares (H.264
/// sections 7.3.2.1.1 and 7.4.2.1.1): the macroblock grid, doubled in
/// height for field coding, less the cropping window. The worker learns
/// each simulcast layer's resolution from the SPS that comes with its
/// IDRs, as it does from VP8 keyframe headers (`VP8KeyframeDimensions`).
///
/// Only the fields up to `frame_cropping` are read (VUI and the rest are
/// not needed). The SPS is read in place: emulation prevention bytes
/// (`00 00 03`, section 7.4.1) are skipped as they come, nothing is copied
/// or allocated, and every Exp-Golomb value is bounded by what the
/// standard allows before it is used.
package struct H264PictureSize: Equatable, Sendable {
    package var width: Int
    package var height: Int

    /// At most 1024 macroblocks (16384 pixels) across or down: more than
    /// any level of Table A-1 allows.
    package static let maxMacroblocks = 1024

    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses the SPS NAL unit at `unit` within `payload` (its header
    /// byte first, type 7: a single NAL unit payload, or a STAP-A unit's
    /// range from `H264PayloadDescriptor.STAPAUnits`).
    package init(parsing payload: RawSpan, unit: Range<Int>) throws(CodecParseError) {
        guard unit.lowerBound >= 0, unit.upperBound <= payload.byteCount, !unit.isEmpty else { throw .truncated }
        guard payload.byte(at: unit.lowerBound) & 0x1F == H264PayloadDescriptor.spsType else {
            throw .notSequenceParameterSet
        }
        var r = RBSPBitReader(start: unit.lowerBound + 1, end: unit.upperBound)
        let profileIDC = try r.bits(8, in: payload)
        _ = try r.bits(16, in: payload)  // constraint flags, reserved bits, level_idc
        _ = try r.unsigned(in: payload, max: 31)  // seq_parameter_set_id
        var chromaFormat: UInt32 = 1
        var separateColourPlanes = false
        // The profiles whose SPS carries chroma format, bit depths and
        // scaling matrices (section 7.3.2.1.1).
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profileIDC) {
            chromaFormat = try r.unsigned(in: payload, max: 3)
            if chromaFormat == 3 { separateColourPlanes = try r.bits(1, in: payload) == 1 }
            _ = try r.unsigned(in: payload, max: 6)  // bit_depth_luma_minus8
            _ = try r.unsigned(in: payload, max: 6)  // bit_depth_chroma_minus8
            _ = try r.bits(1, in: payload)  // qpprime_y_zero_transform_bypass_flag
            if try r.bits(1, in: payload) == 1 {  // seq_scaling_matrix_present_flag
                for list in 0..<(chromaFormat == 3 ? 12 : 8) {
                    if try r.bits(1, in: payload) == 1 { try r.skipScalingList(size: list < 6 ? 16 : 64, in: payload) }
                }
            }
        }
        _ = try r.unsigned(in: payload, max: 12)  // log2_max_frame_num_minus4
        switch try r.unsigned(in: payload, max: 2) {  // pic_order_cnt_type
        case 0:
            _ = try r.unsigned(in: payload, max: 12)  // log2_max_pic_order_cnt_lsb_minus4
        case 1:
            _ = try r.bits(1, in: payload)  // delta_pic_order_always_zero_flag
            _ = try r.signed(in: payload)  // offset_for_non_ref_pic
            _ = try r.signed(in: payload)  // offset_for_top_to_bottom_field
            let cycle = try r.unsigned(in: payload, max: 255)
            for _ in 0..<cycle { _ = try r.signed(in: payload) }
        default:
            break
        }
        _ = try r.unsigned(in: payload, max: 16)  // max_num_ref_frames
        _ = try r.bits(1, in: payload)  // gaps_in_frame_num_value_allowed_flag
        let limit = UInt32(Self.maxMacroblocks - 1)
        let widthInMacroblocks = Int(try r.unsigned(in: payload, max: limit)) + 1
        let heightInMapUnits = Int(try r.unsigned(in: payload, max: limit)) + 1
        let frameMacroblocksOnly = try r.bits(1, in: payload) == 1
        if !frameMacroblocksOnly { _ = try r.bits(1, in: payload) }  // mb_adaptive_frame_field_flag
        _ = try r.bits(1, in: payload)  // direct_8x8_inference_flag
        let fieldFactor = frameMacroblocksOnly ? 1 : 2
        var width = widthInMacroblocks * 16
        var height = heightInMapUnits * 16 * fieldFactor
        if try r.bits(1, in: payload) == 1 {  // frame_cropping_flag
            // CropUnitX/Y (equations 7-19 to 7-22): chroma samples for
            // 4:2:0 and 4:2:2, luma ones for monochrome and 4:4:4.
            let arrayType = separateColourPlanes ? 0 : chromaFormat
            let unitX = arrayType == 1 || arrayType == 2 ? 2 : 1
            let unitY = (arrayType == 1 ? 2 : 1) * fieldFactor
            let bound = UInt32(Self.maxMacroblocks * 16)
            let left = Int(try r.unsigned(in: payload, max: bound))
            let right = Int(try r.unsigned(in: payload, max: bound))
            let top = Int(try r.unsigned(in: payload, max: bound))
            let bottom = Int(try r.unsigned(in: payload, max: bound))
            width -= unitX * (left + right)
            height -= unitY * (top + bottom)
        }
        guard width > 0, height > 0 else { throw .invalidSequenceParameterSet }
        self.width = width
        self.height = height
    }
}

extension H264PayloadDescriptor {
    /// The range of the first SPS unit in `payload`: the whole payload for
    /// a single NAL unit of type 7, a unit of a STAP-A; nil otherwise (an
    /// SPS in fragments is not looked for: libwebrtc never splits one).
    package static func sequenceParameterSetRange(in payload: RawSpan) -> Range<Int>? {
        guard payload.byteCount > 0 else { return nil }
        let type = payload.byte(at: 0) & 0x1F
        if type == spsType { return 0..<payload.byteCount }
        guard type == stapAType else { return nil }
        var units = STAPAUnits()
        while let range = units.next(in: payload) {
            if payload.byte(at: range.lowerBound) & 0x1F == spsType { return range }
        }
        return nil
    }
}

/// Bits of an RBSP read in place from its NAL unit bytes, most
/// significant first, with the emulation prevention byte of each
/// `00 00 03` dropped (H.264 section 7.4.1).
struct RBSPBitReader {
    private var next: Int
    private let end: Int
    private var current: UInt8 = 0
    private var bitsLeft = 0
    private var zeros = 0

    init(start: Int, end: Int) {
        next = start
        self.end = end
    }

    mutating func bit(in s: RawSpan) throws(CodecParseError) -> UInt32 {
        if bitsLeft == 0 {
            guard next < end else { throw .truncated }
            var byte = s.byte(at: next)
            next += 1
            if zeros >= 2, byte == 0x03 {
                guard next < end else { throw .truncated }
                byte = s.byte(at: next)
                next += 1
                zeros = 0
            }
            zeros = byte == 0 ? zeros + 1 : 0
            current = byte
            bitsLeft = 8
        }
        bitsLeft -= 1
        return UInt32(current >> UInt8(bitsLeft)) & 1
    }

    /// `n` bits (at most 32) as an unsigned value.
    mutating func bits(_ n: Int, in s: RawSpan) throws(CodecParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<n { value = value << 1 | (try bit(in: s)) }
        return value
    }

    /// ue(v) (section 9.1), refused above `max`: a code of more than 31
    /// leading zeros cannot be a 32-bit value.
    mutating func unsigned(in s: RawSpan, max: UInt32) throws(CodecParseError) -> UInt32 {
        var leadingZeros = 0
        while try bit(in: s) == 0 {
            leadingZeros += 1
            guard leadingZeros <= 31 else { throw .invalidSequenceParameterSet }
        }
        let value = (UInt64(1) << UInt64(leadingZeros)) - 1 + UInt64(try bits(leadingZeros, in: s))
        guard value <= UInt64(max) else { throw .invalidSequenceParameterSet }
        return UInt32(value)
    }

    /// se(v) (section 9.1.1), within the 32-bit signed range.
    mutating func signed(in s: RawSpan) throws(CodecParseError) -> Int64 {
        let k = Int64(try unsigned(in: s, max: UInt32.max - 1))
        return k % 2 == 1 ? (k + 1) / 2 : -(k / 2)
    }

    /// scaling_list() (section 7.3.2.1.1.1): delta_scale values in
    /// -128...127 until the next scale is 0.
    mutating func skipScalingList(size: Int, in s: RawSpan) throws(CodecParseError) {
        var last: Int64 = 8
        var nextScale: Int64 = 8
        for _ in 0..<size {
            if nextScale != 0 {
                let delta = try signed(in: s)
                guard (-128...127).contains(delta) else { throw .invalidSequenceParameterSet }
                nextScale = (last + delta + 256) % 256
            }
            if nextScale != 0 { last = nextScale }
        }
    }
}
