import RTP
import Wire

extension FuzzEntryPoints {
    /// Parses arbitrary bytes as RTP. When they parse: every CSRC and
    /// extension element lies inside the input, the builder re-serializes
    /// the parsed fields into a packet that parses to the same fields, and
    /// in-place rewrites of a copy read back as written.
    public static func rtp(_ data: UnsafeRawBufferPointer) {
        let bytes = RawSpan(_unsafeBytes: data)
        _ = RTPHeader.isRTCP(bytes)
        guard let header = try? RTPHeader(parsing: bytes) else { return }
        precondition(header.packetLength == data.count)
        precondition(header.payloadOffset + header.payloadLength + header.paddingLength == data.count)
        precondition(header.payloadLength >= 0 && header.csrcCount <= 15)

        var csrcs: [SSRC] = []
        for i in 0..<header.csrcCount {
            guard let csrc = header.csrc(at: i, in: bytes) else { preconditionFailure("CSRC \(i) unreadable") }
            csrcs.append(csrc)
        }
        let elements = extensionElements(header, bytes)
        var opaque: RTPPacketBuilder.OpaqueExtension?
        var appBits: UInt8 = 0
        if let ext = header.headerExtension {
            precondition(ext.headerOffset >= 12 + 4 * header.csrcCount && ext.dataRange.upperBound == header.payloadOffset)
            switch ext.form {
            case .opaque(let profile): opaque = .init(profile: profile, data: bytes.extracting(ext.dataRange).copiedBytes())
            case .twoByte(let bits): appBits = bits
            case .oneByte: break
            }
        }
        let builder = RTPPacketBuilder(
            marker: header.marker, payloadType: header.payloadType, sequenceNumber: header.sequenceNumber,
            timestamp: header.timestamp, ssrc: header.ssrc, csrcs: csrcs, extensions: elements,
            opaqueExtension: opaque, twoByteAppBits: appBits, paddingLength: header.paddingLength)
        let payload = bytes.extracting(header.payloadRange).copiedBytes()
        guard let rebuilt = try? builder.build(payload: payload) else { preconditionFailure("rebuild failed") }
        let rebuiltSpan = rebuilt.span.bytes
        guard let again = try? RTPHeader(parsing: rebuiltSpan) else { preconditionFailure("rebuilt packet does not parse") }
        precondition(again.marker == header.marker && again.payloadType == header.payloadType)
        precondition(again.sequenceNumber == header.sequenceNumber && again.timestamp == header.timestamp)
        precondition(again.ssrc == header.ssrc && again.csrcCount == header.csrcCount)
        precondition(again.paddingLength == header.paddingLength)
        for i in 0..<csrcs.count { precondition(again.csrc(at: i, in: rebuiltSpan) == csrcs[i]) }
        precondition(Array(rebuilt[again.payloadRange]) == payload)
        precondition(extensionElements(again, rebuiltSpan) == elements)
        if opaque != nil {
            precondition(again.headerExtension?.form == header.headerExtension?.form)
        }

        // In-place rewrites on a copy read back as written.
        var copy = Array(UnsafeRawBufferPointer(data))
        let first = elements.first
        let rewrote = copy.withUnsafeMutableBytes { raw -> Bool in
            let m = MutableBytes(raw)
            var ok =
                RTPHeaderRewriter.setSSRC(SSRC(0xA5A5_A5A5), in: m)
                && RTPHeaderRewriter.setSequenceNumber(header.sequenceNumber &+ 1, in: m)
                && RTPHeaderRewriter.setTimestamp(header.timestamp &+ 90, in: m)
                && RTPHeaderRewriter.setPayloadType(PayloadType(masking: 100), in: m)
            if let first {
                let value = [UInt8](repeating: 0xEE, count: first.value.count)
                ok = ok && RTPHeaderRewriter.overwriteExtensionValue(id: first.id, with: value.span.bytes, header: header, in: m)
            }
            return ok
        }
        precondition(rewrote)
        guard let rewritten = try? RTPHeader(parsing: copy.span.bytes) else { preconditionFailure("rewrite broke parse") }
        precondition(rewritten.ssrc == SSRC(0xA5A5_A5A5) && rewritten.marker == header.marker)
        precondition(rewritten.payloadType == PayloadType(masking: 100))
        if let first, let range = rewritten.extensionValueRange(id: first.id, in: copy.span.bytes) {
            precondition(copy[range].allSatisfy { $0 == 0xEE })
        }
    }

    private static func extensionElements(_ header: RTPHeader, _ bytes: RawSpan) -> [RTPPacketBuilder.Extension] {
        guard let ext = header.headerExtension else { return [] }
        var out: [RTPPacketBuilder.Extension] = []
        var cursor = ext.elements()
        while let e = cursor.next(in: bytes) {
            precondition(e.id != 0 && e.valueRange.lowerBound >= ext.dataRange.lowerBound)
            precondition(e.valueRange.upperBound <= ext.dataRange.upperBound && e.valueRange.upperBound <= bytes.byteCount)
            out.append(.init(id: e.id, value: bytes.extracting(e.valueRange).copiedBytes()))
        }
        return out
    }
}
