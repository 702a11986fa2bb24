import Codecs
import Wire

extension FuzzEntryPoints {
    /// Runs the VP8, H264 (descriptor and SPS size) and Opus parsers over
    /// the same bytes (as an RTP payload). When one parses, its offsets lie in the input and its
    /// counts are in range; VP8 rewrites of a copy read back as written.
    public static func codecs(_ data: UnsafeRawBufferPointer) {
        let bytes = RawSpan(_unsafeBytes: data)
        if let d = try? VP8PayloadDescriptor(parsing: bytes) {
            precondition(d.payloadHeaderOffset >= 1 && d.payloadHeaderOffset <= data.count)
            precondition(d.partitionIndex <= 7)
            if let offset = d.pictureIDOffset { precondition(offset + (d.hasLongPictureID ? 2 : 1) <= d.payloadHeaderOffset) }
            if let id = d.pictureID { precondition(id < d.pictureIDModulus) }
            if let offset = d.tl0PictureIndexOffset { precondition(offset < d.payloadHeaderOffset) }
            if d.keyframeWidth != nil { precondition(d.isKeyframe && d.payloadHeaderOffset + 10 <= data.count) }
            var copy = Array(UnsafeRawBufferPointer(data))
            let ok = copy.withUnsafeMutableBytes { raw -> (Bool, Bool) in
                let m = MutableBytes(raw)
                return (d.rewritePictureID(0x1234, in: m, payloadOffset: 0), d.rewriteTL0PictureIndex(9, in: m, payloadOffset: 0))
            }
            precondition(ok.0 == (d.pictureID != nil) && ok.1 == (d.tl0PictureIndex != nil))
            guard let after = try? VP8PayloadDescriptor(parsing: copy.span.bytes) else {
                preconditionFailure("rewrite broke VP8")
            }
            if d.pictureID != nil { precondition(after.pictureID == 0x1234 & (d.pictureIDModulus - 1)) }
            if d.tl0PictureIndex != nil { precondition(after.tl0PictureIndex == 9) }
            precondition(after.payloadHeaderOffset == d.payloadHeaderOffset)
        }
        if let d = try? H264PayloadDescriptor(parsing: bytes) {
            if case .stapA(let count) = d.packetization {
                var units = H264PayloadDescriptor.STAPAUnits()
                var seen = 0
                while let range = units.next(in: bytes) {
                    precondition(range.lowerBound >= 3 && range.upperBound <= data.count && !range.isEmpty)
                    seen += 1
                }
                precondition(seen == count && count >= 1)
            }
            // The SPS reader, on the unit the worker would hand it.
            if d.containsSPS, let unit = H264PayloadDescriptor.sequenceParameterSetRange(in: bytes) {
                precondition(unit.lowerBound >= 0 && unit.upperBound <= data.count)
                if let size = try? H264PictureSize(parsing: bytes, unit: unit) {
                    precondition(size.width > 0 && size.width <= 16 * H264PictureSize.maxMacroblocks)
                    precondition(size.height > 0 && size.height <= 32 * H264PictureSize.maxMacroblocks)
                }
            }
        }
        if let toc = try? OpusTOC(parsing: bytes) {
            precondition(toc.frameCount >= 1 && toc.frameCount <= 48)
            precondition(toc.packetDuration <= OpusTOC.maximumDuration)
        }
        for codec in [VideoCodec.vp8, .vp9, .h264, .av1] {
            _ = try? PayloadDescriptor(codec: codec, payload: bytes)
        }
    }
}
