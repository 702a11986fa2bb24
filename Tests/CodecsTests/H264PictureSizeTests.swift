import Codecs
import Testing
import Wire

/// `H264PictureSize`: a layer's resolution from the SPS sent with its IDRs
/// (H.264 section 7.3.2.1.1).
@Suite struct H264PictureSizeTests {
    /// SPS units of Chromium 156's OpenH264 encoder (Constrained Baseline,
    /// `42c0..`), taken from its encoded keyframes (encoded insertable
    /// streams) at the three sizes of the fake camera's simulcast layers.
    /// 180 and 360 are not multiples of 16: the SPS crops the bottom.
    static let chromium320x180: [UInt8] = [
        0x67, 0x42, 0xC0, 0x15, 0x8C, 0x8D, 0x40, 0xA0, 0xCB, 0xCF, 0x35, 0x06, 0x06, 0x06, 0x07, 0x84, 0x42, 0x35, 0x00,
    ]
    static let chromium640x360: [UInt8] = [
        0x67, 0x42, 0xC0, 0x1F, 0x8C, 0x8D, 0x40, 0x50, 0x17, 0xFC, 0xB3, 0x50, 0x60, 0x60, 0x60, 0x78, 0x44, 0x23, 0x50,
    ]
    static let chromium1280x720: [UInt8] = [
        0x67, 0x42, 0xC0, 0x20, 0x8C, 0x8D, 0x40, 0x28, 0x02, 0xDD, 0x35, 0x06, 0x06, 0x06, 0x07, 0x84, 0x42, 0x35, 0x00,
    ]

    static func size(_ unit: [UInt8]) throws(CodecParseError) -> H264PictureSize {
        try H264PictureSize(parsing: unit.span.bytes, unit: 0..<unit.count)
    }

    static func size(_ payload: [UInt8], unit: Range<Int>) throws(CodecParseError) -> H264PictureSize {
        try H264PictureSize(parsing: payload.span.bytes, unit: unit)
    }

    static func spsRange(_ payload: [UInt8]) -> Range<Int>? {
        H264PayloadDescriptor.sequenceParameterSetRange(in: payload.span.bytes)
    }

    @Test func readsChromiumLayerSizes() throws {
        #expect(try Self.size(Self.chromium320x180) == H264PictureSize(width: 320, height: 180))
        #expect(try Self.size(Self.chromium640x360) == H264PictureSize(width: 640, height: 360))
        #expect(try Self.size(Self.chromium1280x720) == H264PictureSize(width: 1280, height: 720))
    }

    @Test func findsTheSPSInASTAPAAsLibwebrtcSendsIt() throws {
        let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
        let idr: [UInt8] = [0x65, 0xB8, 0x00, 0x04]
        var stap: [UInt8] = [0x78]
        for unit in [Self.chromium640x360, pps, idr] { stap += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)] + unit }
        let range = try #require(Self.spsRange(stap))
        #expect(range == 3..<(3 + Self.chromium640x360.count))
        #expect(try Self.size(stap, unit: range) == H264PictureSize(width: 640, height: 360))
        // A single-unit SPS packet is its own range; other units have none.
        #expect(Self.spsRange(Self.chromium320x180) == 0..<19)
        #expect(Self.spsRange(pps) == nil)
        #expect(Self.spsRange([]) == nil)
    }

    /// An SPS written bit by bit: High profile 4:2:0 with a scaling list,
    /// picture order count type 1, field coding and a crop on every side,
    /// so the paths Chromium's encoder does not take are read too.
    @Test func readsHighProfileFieldCodedSPSWithScalingListsAndCropping() throws {
        var w = BitWriter()
        w.bits(0x67, 8)  // NAL header, type 7
        w.bits(100, 8)  // profile_idc: High
        w.bits(0x00, 8)  // constraint flags
        w.bits(40, 8)  // level_idc 4.0
        w.ue(0)  // seq_parameter_set_id
        w.ue(1)  // chroma_format_idc 4:2:0
        w.ue(0)  // bit_depth_luma_minus8
        w.ue(0)  // bit_depth_chroma_minus8
        w.bits(0, 1)  // qpprime_y_zero_transform_bypass_flag
        w.bits(1, 1)  // seq_scaling_matrix_present_flag
        for list in 0..<8 {
            w.bits(list == 0 ? 1 : 0, 1)
            if list == 0 {
                // Three deltas, then one that makes the next scale 0.
                w.se(-3)
                w.se(5)
                w.se(1)
                w.se(-11)
            }
        }
        w.ue(0)  // log2_max_frame_num_minus4
        w.ue(1)  // pic_order_cnt_type 1
        w.bits(0, 1)  // delta_pic_order_always_zero_flag
        w.se(-2)  // offset_for_non_ref_pic
        w.se(1)  // offset_for_top_to_bottom_field
        w.ue(2)  // num_ref_frames_in_pic_order_cnt_cycle
        w.se(4)
        w.se(-4)
        w.ue(4)  // max_num_ref_frames
        w.bits(0, 1)  // gaps_in_frame_num_value_allowed_flag
        w.ue(119)  // pic_width_in_mbs_minus1: 1920
        w.ue(33)  // pic_height_in_map_units_minus1: 34 field MB rows = 1088
        w.bits(0, 1)  // frame_mbs_only_flag: fields
        w.bits(1, 1)  // mb_adaptive_frame_field_flag
        w.bits(1, 1)  // direct_8x8_inference_flag
        w.bits(1, 1)  // frame_cropping_flag
        w.ue(1)  // left: 2 px
        w.ue(2)  // right: 4 px
        w.ue(1)  // top: 4 px (CropUnitY = 2 * 2)
        w.ue(1)  // bottom: 4 px
        w.bits(0, 1)  // vui_parameters_present_flag
        w.bits(1, 1)  // rbsp_stop_one_bit
        let unit = w.bytes
        #expect(try Self.size(unit) == H264PictureSize(width: 1920 - 6, height: 1088 - 8))
    }

    @Test func skipsEmulationPreventionBytes() throws {
        // Baseline with constraint flags 0 and level_idc 0: two zero bytes.
        var w = BitWriter()
        w.bits(0x67, 8)
        w.bits(66, 8)  // profile_idc Baseline
        w.bits(0, 8)  // constraint flags
        w.bits(0, 8)  // level_idc 0
        w.ue(0)  // seq_parameter_set_id
        w.ue(0)  // log2_max_frame_num_minus4
        w.ue(2)  // pic_order_cnt_type 2
        w.ue(1)  // max_num_ref_frames
        w.bits(0, 1)
        w.ue(19)  // 320
        w.ue(14)  // 240
        w.bits(1, 1)
        w.bits(1, 1)
        w.bits(0, 1)
        w.bits(1, 1)
        let rbsp = w.bytes
        #expect(rbsp[2] == 0x00 && rbsp[3] == 0x00)
        #expect(try Self.size(rbsp) == H264PictureSize(width: 320, height: 240))
        // A 03 after two zero bytes is an emulation prevention byte
        // wherever it stands (section 7.4.1), and is not part of the RBSP:
        // read as data it would make the sps id ue(v) 6 zero bits long.
        let escaped = Array(rbsp[0..<4]) + [0x03] + Array(rbsp[4...])
        #expect(try Self.size(escaped) == H264PictureSize(width: 320, height: 240))
    }

    @Test func rejectsWhatIsNotAWholeValidSPS() {
        #expect(throws: CodecParseError.notSequenceParameterSet) { try Self.size([0x68, 0xCE, 0x3C, 0x80]) }
        #expect(throws: CodecParseError.truncated) { try Self.size([0x67]) }
        #expect(throws: CodecParseError.truncated) { try Self.size(Array(Self.chromium640x360.prefix(8))) }
        #expect(throws: CodecParseError.truncated) { try Self.size([]) }
        // 33 leading zero bits: no 32-bit Exp-Golomb value.
        #expect(throws: CodecParseError.invalidSequenceParameterSet) {
            try Self.size([0x67, 0x42, 0xC0, 0x1F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80])
        }
        // seq_parameter_set_id 32 (ue 000001 00001): above 31.
        var w = BitWriter()
        w.bits(0x67, 8)
        w.bits(66, 8)
        w.bits(0xC0, 8)
        w.bits(31, 8)
        w.ue(32)
        w.bits(0xFF, 8)
        #expect(throws: CodecParseError.invalidSequenceParameterSet) { try Self.size(w.bytes) }
        // A crop larger than the picture.
        var c = BitWriter()
        c.bits(0x67, 8)
        c.bits(66, 8)
        c.bits(0xC0, 8)
        c.bits(31, 8)
        c.ue(0)
        c.ue(0)
        c.ue(2)
        c.ue(1)
        c.bits(0, 1)
        c.ue(0)  // 16 wide
        c.ue(0)  // 16 high
        c.bits(1, 1)
        c.bits(1, 1)
        c.bits(1, 1)  // cropping
        c.ue(4)  // left 8
        c.ue(4)  // right 8: nothing left
        c.ue(0)
        c.ue(0)
        c.bits(1, 1)
        #expect(throws: CodecParseError.invalidSequenceParameterSet) { try Self.size(c.bytes) }
        // A range outside the payload.
        #expect(throws: CodecParseError.truncated) {
            try Self.size(Self.chromium640x360, unit: 0..<40)
        }
    }
}

/// Writes bits most significant first, with ue(v)/se(v) (H.264 section 9.1).
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var used = 8

    mutating func bits(_ value: Int, _ count: Int) {
        for i in stride(from: count - 1, through: 0, by: -1) {
            if used == 8 {
                bytes.append(0)
                used = 0
            }
            if (value >> i) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(used) }
            used += 1
        }
    }

    mutating func ue(_ value: Int) {
        let code = value + 1
        let length = Int.bitWidth - code.leadingZeroBitCount
        bits(0, length - 1)
        bits(code, length)
    }

    mutating func se(_ value: Int) { ue(value > 0 ? 2 * value - 1 : -2 * value) }
}
