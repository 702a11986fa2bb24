import Wire

/// Serializes an RTP packet (RFC 3550 section 5.1) from field values.
///
/// The header extension form is chosen per RFC 8285 section 4.1.1: the
/// one-byte form (profile 0xBEDE) when every element has an ID in 1...14
/// and a value of 1...16 bytes, otherwise the two-byte form (profile
/// 0x1000, app bits from `twoByteAppBits`), which allows IDs 1...255 and
/// values of 0...255 bytes. The block is zero-padded to a 32-bit boundary.
///
/// Configuring a builder allocates (its CSRC and extension arrays); writing
/// with `write(payload:into:)` does not. A sender that builds many packets
/// keeps one builder, or writes once and then rewrites sequence number,
/// timestamp and extension values in place with `RTPHeaderRewriter`.
package struct RTPPacketBuilder: Sendable {
    /// One RFC 8285 element to write.
    package struct Extension: Equatable, Sendable {
        package var id: UInt8
        package var value: [UInt8]
        package init(id: UInt8, value: [UInt8]) {
            self.id = id
            self.value = value
        }
    }

    /// A non-RFC 8285 extension, written verbatim; `data` must be a multiple
    /// of 4 bytes.
    package struct OpaqueExtension: Equatable, Sendable {
        package var profile: UInt16
        package var data: [UInt8]
        package init(profile: UInt16, data: [UInt8]) {
            self.profile = profile
            self.data = data
        }
    }

    package var marker: Bool
    package var payloadType: PayloadType
    package var sequenceNumber: UInt16
    package var timestamp: UInt32
    package var ssrc: SSRC
    /// At most 15.
    package var csrcs: [SSRC]
    /// RFC 8285 elements, written in this order.
    package var extensions: [Extension]
    /// Used instead of `extensions` when set.
    package var opaqueExtension: OpaqueExtension?
    /// Low 4 bits of the profile when the two-byte form is used.
    package var twoByteAppBits: UInt8
    /// Padding bytes to append, count byte included: 0 (no P bit) or
    /// 1...255.
    package var paddingLength: Int

    package init(
        marker: Bool = false, payloadType: PayloadType, sequenceNumber: UInt16, timestamp: UInt32, ssrc: SSRC,
        csrcs: [SSRC] = [], extensions: [Extension] = [], opaqueExtension: OpaqueExtension? = nil,
        twoByteAppBits: UInt8 = 0, paddingLength: Int = 0
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.extensions = extensions
        self.opaqueExtension = opaqueExtension
        self.twoByteAppBits = twoByteAppBits
        self.paddingLength = paddingLength
    }

    package enum BuildError: Error, Equatable, Sendable {
        case tooManyCSRCs
        /// ID 0 (padding), or ID 15 in a one-byte-only context.
        case invalidExtensionID(UInt8)
        /// A value longer than 255 bytes.
        case extensionValueTooLong(id: UInt8)
        /// The block exceeds 65535 words, or opaque data is not word-aligned.
        case invalidExtensionBlock
        case invalidPadding
        case bufferTooSmall(needed: Int)
    }

    /// The extension form the builder will use, or nil for no RFC 8285
    /// block (no elements, or an opaque extension).
    package func rfc8285Form() throws(BuildError) -> RTPHeaderExtension.Form? {
        guard opaqueExtension == nil, !extensions.isEmpty else { return nil }
        var oneByte = true
        for e in extensions {
            guard e.id != 0 else { throw .invalidExtensionID(0) }
            guard e.value.count <= 255 else { throw .extensionValueTooLong(id: e.id) }
            if e.id > 14 || e.value.isEmpty || e.value.count > 16 { oneByte = false }
        }
        return oneByte ? .oneByte : .twoByte(appBits: twoByteAppBits & 0x0F)
    }

    /// Bytes of extension data after the 4-byte extension header, padded to
    /// a multiple of 4; nil without an extension.
    func extensionDataLength() throws(BuildError) -> Int? {
        if let opaque = opaqueExtension {
            guard opaque.data.count % 4 == 0, opaque.data.count / 4 <= Int(UInt16.max) else { throw .invalidExtensionBlock }
            return opaque.data.count
        }
        guard let form = try rfc8285Form() else { return nil }
        let perElement = form == .oneByte ? 1 : 2
        var total = 0
        for e in extensions { total += perElement + e.value.count }
        let padded = (total + 3) & ~3
        guard padded / 4 <= Int(UInt16.max) else { throw .invalidExtensionBlock }
        return padded
    }

    /// Length of the packet for a payload of `payloadLength` bytes.
    package func encodedLength(payloadLength: Int) throws(BuildError) -> Int {
        guard csrcs.count <= 15 else { throw .tooManyCSRCs }
        guard paddingLength >= 0, paddingLength <= 255 else { throw .invalidPadding }
        var length = RTPHeader.fixedHeaderLength + 4 * csrcs.count
        if let data = try extensionDataLength() { length += 4 + data }
        return length + payloadLength + paddingLength
    }

    /// Writes the packet at the start of `buffer`; returns its length.
    /// Allocates nothing.
    package func write(payload: RawSpan, into buffer: MutableBytes) throws(BuildError) -> Int {
        let length = try encodedLength(payloadLength: payload.byteCount)
        guard buffer.count >= length else { throw .bufferTooSmall(needed: length) }
        let extensionData = try extensionDataLength()
        var first: UInt8 = 0x80 | UInt8(csrcs.count)
        if paddingLength > 0 { first |= 0x20 }
        if extensionData != nil { first |= 0x10 }
        buffer.store(first, at: 0)
        buffer.store((marker ? 0x80 : 0) | payloadType.rawValue, at: 1)
        buffer.store(sequenceNumber, at: 2)
        buffer.store(timestamp, at: 4)
        buffer.store(ssrc.rawValue, at: 8)
        var offset = RTPHeader.fixedHeaderLength
        for csrc in csrcs {
            buffer.store(csrc.rawValue, at: offset)
            offset += 4
        }
        if let dataLength = extensionData {
            offset = try writeExtension(dataLength: dataLength, at: offset, into: buffer)
        }
        payload.withUnsafeBytes { source in
            if source.count > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer.base[offset..<offset + source.count]).copyMemory(from: source)
            }
        }
        offset += payload.byteCount
        if paddingLength > 0 {
            for i in 0..<paddingLength - 1 { buffer.store(UInt8(0), at: offset + i) }
            buffer.store(UInt8(paddingLength), at: offset + paddingLength - 1)
        }
        return length
    }

    private func writeExtension(dataLength: Int, at start: Int, into buffer: MutableBytes) throws(BuildError) -> Int {
        var offset = start
        let words = UInt16(truncatingIfNeeded: dataLength / 4)
        if let opaque = opaqueExtension {
            buffer.store(opaque.profile, at: offset)
            buffer.store(words, at: offset + 2)
            offset += 4
            for b in opaque.data {
                buffer.store(b, at: offset)
                offset += 1
            }
            return offset
        }
        let oneByte = try rfc8285Form() == .oneByte
        buffer.store(
            oneByte ? RTPHeaderExtension.oneByteProfile : RTPHeaderExtension.twoByteProfile | UInt16(twoByteAppBits & 0x0F),
            at: offset)
        buffer.store(words, at: offset + 2)
        offset += 4
        let end = offset + dataLength
        for e in extensions {
            if oneByte {
                buffer.store(e.id << 4 | UInt8(e.value.count - 1), at: offset)
                offset += 1
            } else {
                buffer.store(e.id, at: offset)
                buffer.store(UInt8(e.value.count), at: offset + 1)
                offset += 2
            }
            for b in e.value {
                buffer.store(b, at: offset)
                offset += 1
            }
        }
        while offset < end {
            buffer.store(UInt8(0), at: offset)
            offset += 1
        }
        return offset
    }

    /// The packet as a new array (control plane, tests, seeds).
    package func build(payload: RawSpan) throws(BuildError) -> [UInt8] {
        let length = try encodedLength(payloadLength: payload.byteCount)
        var out = [UInt8](repeating: 0, count: length)
        let result: Result<Int, BuildError> = out.withUnsafeMutableBytes { raw in
            do throws(BuildError) { return .success(try write(payload: payload, into: MutableBytes(raw))) } catch {
                return .failure(error)
            }
        }
        _ = try result.get()
        return out
    }

    package func build(payload: [UInt8] = []) throws(BuildError) -> [UInt8] {
        try build(payload: payload.span.bytes)
    }
}
