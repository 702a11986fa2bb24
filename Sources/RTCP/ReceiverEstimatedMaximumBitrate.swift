import Wire

/// REMB: PSFB (206) with FMT 15, application layer feedback identified by
/// 'REMB' (draft-alvestrand-rmcat-remb-03 section 2.2).
///
///     |V=2|P| FMT=15  |   PT=206      |             length            |
///     |                  SSRC of packet sender                        |
///     |                  SSRC of media source (0)                     |
///     |  Unique identifier 'R' 'E' 'M' 'B'                            |
///     |  Num SSRC     | BR Exp    |  BR Mantissa                      |
///     |   SSRC feedback                                               |
///     |  ...                                                          |
///
/// The bitrate is mantissa * 2^exp bits per second. A 6-bit exponent over
/// an 18-bit mantissa reaches past 2^64, so `bitrate` saturates at the
/// largest `Bitrate` instead of overflowing. PSFB FMT 15 without the
/// identifier is rejected, as is a Num SSRC larger than the SSRCs present.
package struct ReceiverEstimatedMaximumBitrate: Equatable, Sendable {
    package static let format: UInt8 = 15
    /// 'R' 'E' 'M' 'B'.
    package static let identifier: UInt32 = 0x5245_4D42
    package static let maximumMantissa: UInt32 = (1 << 18) - 1
    package static let maximumExponent: UInt8 = 63

    package var senderSSRC: SSRC
    package var mediaSSRC: SSRC
    /// 6 bits.
    package var exponent: UInt8
    /// 18 bits.
    package var mantissa: UInt32
    package var ssrcs: [SSRC]

    /// Exact wire fields; `exponent` and `mantissa` are masked to their widths.
    package init(senderSSRC: SSRC, mediaSSRC: SSRC = SSRC(0), exponent: UInt8, mantissa: UInt32, ssrcs: [SSRC]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.exponent = exponent & 0x3F
        self.mantissa = mantissa & Self.maximumMantissa
        self.ssrcs = ssrcs
    }

    /// Encodes `bitrate` with the smallest exponent whose mantissa fits,
    /// rounding down (never advertising more than asked). Negative rates
    /// encode as 0.
    package init(senderSSRC: SSRC, mediaSSRC: SSRC = SSRC(0), bitrate: Bitrate, ssrcs: [SSRC]) {
        var value = UInt64(max(bitrate.bitsPerSecond, 0))
        var exponent: UInt8 = 0
        while value > UInt64(Self.maximumMantissa) {
            value >>= 1
            exponent += 1
        }
        self.init(
            senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, exponent: exponent,
            mantissa: UInt32(truncatingIfNeeded: value), ssrcs: ssrcs)
    }

    /// mantissa * 2^exponent, saturating at `Int64.max` bits per second.
    package var bitrate: Bitrate {
        let m = Int64(mantissa)
        guard m != 0 else { return Bitrate(bitsPerSecond: 0) }
        // m < 2^18, so m << e fits in Int64 exactly when e <= 62 - 17 = 45,
        // and for larger e when the high bits shifted out are zero.
        let e = Int64(exponent)
        guard e < 63, m <= Int64.max >> e else { return Bitrate(bitsPerSecond: .max) }
        return Bitrate(bitsPerSecond: m << e)
    }

    static func parse(_ header: RTCPHeader, _ reader: inout ByteReader) throws(RTCPParseError) -> ReceiverEstimatedMaximumBitrate
    {
        let sender = try reader.ssrc(or: .truncated)
        let media = try reader.ssrc(or: .truncated)
        guard try reader.uint32(or: RTCPParseError.missingREMBIdentifier) == identifier else {
            throw .missingREMBIdentifier
        }
        let count = try reader.uint8(or: RTCPParseError.truncated)
        let packed = try reader.uint24(or: RTCPParseError.truncated)
        guard reader.canRead(Int(count) * 4) else { throw .countBeyondPacket }
        var ssrcs: [SSRC] = []
        ssrcs.reserveCapacity(Int(count))
        for _ in 0..<count { ssrcs.append(try reader.ssrc(or: .truncated)) }
        return ReceiverEstimatedMaximumBitrate(
            senderSSRC: sender, mediaSSRC: media,
            exponent: UInt8(truncatingIfNeeded: packed >> 18),
            mantissa: packed & maximumMantissa, ssrcs: ssrcs)
    }

    /// Appends the packet. Only the first 255 SSRCs fit the 8-bit count.
    package func serialize(into writer: inout ByteWriter) {
        let selected = ssrcs.prefix(255)
        writer.rtcpPacket(count: Self.format, packetType: RTCPPacketType.payloadFeedback) { w in
            w.uint32(senderSSRC.rawValue)
            w.uint32(mediaSSRC.rawValue)
            w.uint32(Self.identifier)
            w.uint8(UInt8(selected.count))
            w.uint24(UInt32(exponent & 0x3F) << 18 | (mantissa & Self.maximumMantissa))
            for s in selected { w.uint32(s.rawValue) }
        }
    }

    package func serialized() -> [UInt8] {
        var writer = ByteWriter()
        serialize(into: &writer)
        return writer.bytes
    }
}
