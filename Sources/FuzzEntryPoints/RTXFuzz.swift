import RTP
import Wire

extension FuzzEntryPoints {
    /// Runs the RFC 4588 in-place functions over arbitrary bytes, in a slot
    /// with room to spare. When `wrap` succeeds, the result parses as RTP
    /// with the RTX fields, and `unwrap` restores the input with its
    /// padding removed; when `unwrap` succeeds on the raw input, the result
    /// parses and fits. `makePadding` with a size from the input parses
    /// back as padding only.
    public static func rtx(_ data: UnsafeRawBufferPointer) {
        let rtxSSRC = SSRC(0xA1B2_C3D4)
        let rtxPT = PayloadType(masking: 97)
        var slot = [UInt8](repeating: 0xEE, count: data.count + 8)
        let before = RawSpan(_unsafeBytes: data)
        let original = try? RTPHeader(parsing: before)
        slot.withUnsafeMutableBytes { raw in
            for i in 0..<data.count { raw[i] = data[i] }
            let wrapped = RTXPacket.wrap(
                in: raw, length: data.count, rtxSSRC: rtxSSRC, rtxSequenceNumber: 7, rtxPayloadType: rtxPT)
            guard let original else {
                precondition(wrapped == nil, "wrap accepted what RTPHeader rejects")
                return
            }
            guard let wrapped else { preconditionFailure("wrap refused a valid packet with room for the OSN") }
            precondition(wrapped == original.payloadOffset + 2 + original.payloadLength)
            let span = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(raw)[0..<wrapped]))
            guard let rtx = try? RTPHeader(parsing: span) else { preconditionFailure("wrapped packet does not parse") }
            precondition(rtx.ssrc == rtxSSRC && rtx.sequenceNumber == 7 && rtx.payloadType == rtxPT && !rtx.hasPadding)
            precondition(rtx.marker == original.marker && rtx.timestamp == original.timestamp)
            precondition(rtx.payloadOffset == original.payloadOffset)
            precondition(RTXPacket.originalSequenceNumber(header: rtx, in: span) == original.sequenceNumber)

            guard
                let back = RTXPacket.unwrap(
                    in: raw, length: wrapped, originalSSRC: original.ssrc, originalPayloadType: original.payloadType)
            else { preconditionFailure("unwrap refused a wrapped packet") }
            precondition(back.originalSequenceNumber == original.sequenceNumber)
            precondition(back.length == original.payloadOffset + original.payloadLength)
            for i in 1..<back.length { precondition(raw[i] == data[i], "unwrap did not restore byte \(i)") }
            precondition(raw[0] == data[0] & ~0x20)
        }
        slot.withUnsafeMutableBytes { raw in
            for i in 0..<data.count { raw[i] = data[i] }
            if let back = RTXPacket.unwrap(in: raw, length: data.count, originalSSRC: SSRC(1), originalPayloadType: rtxPT) {
                precondition(back.length <= data.count - 2)
                let span = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(raw)[0..<back.length]))
                guard let restored = try? RTPHeader(parsing: span) else { preconditionFailure("unwrapped packet does not parse") }
                precondition(restored.sequenceNumber == back.originalSequenceNumber && restored.ssrc == SSRC(1))
            }
        }
        let paddingBytes = data.isEmpty ? 0 : Int(data[0])
        var probe = [UInt8](repeating: 0, count: 12 + 255)
        probe.withUnsafeMutableBytes { raw in
            let length = RTXPacket.makePadding(
                in: raw, rtxSSRC: rtxSSRC, sequenceNumber: 1, payloadType: rtxPT, timestamp: 2, paddingBytes: paddingBytes)
            precondition((length != nil) == (paddingBytes >= 1))
            guard let length else { return }
            let span = RawSpan(_unsafeBytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(raw)[0..<length]))
            guard let header = try? RTPHeader(parsing: span) else { preconditionFailure("padding packet does not parse") }
            precondition(header.payloadLength == 0 && header.paddingLength == paddingBytes)
        }
    }
}
