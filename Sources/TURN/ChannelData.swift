import Wire

/// A ChannelData message (RFC 8656 section 12.4): a 2-byte channel number
/// (see below), a 2-byte length, then the application data. Over
/// TCP and TLS it is padded to a multiple of 4 bytes (section 12.5); over
/// UDP padding may be present and is ignored.
///
/// Channel numbers: RFC 8656 section 12 allows 0x4000...0x4FFF, whose
/// first byte (64...79) RFC 7983 section 7 reserves for TURN channels on a
/// port shared with DTLS and RTP. RFC 5766 section 11, which it replaced,
/// allowed 0x4000...0x7FFF, and clients of that era still pick numbers up
/// there (coturn's `turnutils_uclient` does). The TURN port carries only
/// STUN and ChannelData, so nothing else can start with 64...127 there:
/// the older range is taken too.
package enum ChannelData {
    package static let headerLength = 4
    /// The numbers a client may bind.
    package static let channelNumbers: ClosedRange<UInt16> = 0x4000...0x7FFF

    /// True when `first` opens a ChannelData message (section 12.4).
    package static func isChannelData(firstByte first: UInt8) -> Bool { first & 0xC0 == 0x40 }

    /// The channel number and where the data lies in `bytes`, a whole
    /// datagram or stream frame. Fails when the header is short, the number
    /// is outside the channel range, or the length runs past the bytes.
    package static func parse(
        _ bytes: UnsafeRawBufferPointer
    ) throws(TURNParseError) -> (
        channel: UInt16, data: Range<Int>
    ) {
        guard bytes.count >= headerLength else { throw .truncated }
        let channel = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let length = Int(bytes[2]) << 8 | Int(bytes[3])
        guard channelNumbers.contains(channel) else { throw .badChannelNumber }
        guard headerLength + length <= bytes.count else { throw .truncated }
        return (channel, headerLength..<headerLength + length)
    }

    /// The message for `data` on `channel`, padded to 4 bytes when `padded`
    /// (stream transports, section 12.5).
    package static func build(channel: UInt16, data: UnsafeRawBufferPointer, padded: Bool) -> [UInt8] {
        let total = headerLength + (padded ? (data.count + 3) & ~3 : data.count)
        var out = [UInt8](repeating: 0, count: total)
        out[0] = UInt8(channel >> 8)
        out[1] = UInt8(truncatingIfNeeded: channel)
        out[2] = UInt8(truncatingIfNeeded: data.count >> 8)
        out[3] = UInt8(truncatingIfNeeded: data.count)
        out.withUnsafeMutableBytes { o in
            guard let base = data.baseAddress, data.count > 0 else { return }
            o.baseAddress!.advanced(by: headerLength).copyMemory(from: base, byteCount: data.count)
        }
        return out
    }
}

/// Why bytes on a TURN port were not a message we take.
package enum TURNParseError: Error, Equatable, Sendable {
    /// Shorter than its header or than the length it declares.
    case truncated
    /// A ChannelData number outside 0x4000...0x7FFF.
    case badChannelNumber
    /// The first byte opens neither STUN (0...63) nor ChannelData (64...127).
    case notTURN
}
