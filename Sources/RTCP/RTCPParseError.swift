/// Why an RTCP compound packet was rejected.
///
/// Any error rejects the whole compound (see `RTCPCompoundPacket`): SRTCP
/// authenticates the compound as one unit, so a compound with one malformed
/// packet is treated as damaged or hostile and dropped whole.
package enum RTCPParseError: Error, Equatable, Sendable {
    /// Fewer than 4 bytes left where a common header should start.
    case truncatedHeader
    /// The version field is not 2 (RFC 3550 section 6.4.1).
    case unsupportedVersion
    /// The header's length field claims more bytes than the buffer holds.
    case lengthBeyondBuffer
    /// The padding bit is set but the padding count is zero or larger than
    /// the packet's body (RFC 3550 section 6.4.1).
    case invalidPadding
    /// The padding bit is set on a packet that is not the last of the
    /// compound (RFC 3550 section 6.4.1, appendix A.2).
    case paddingNotInLastPacket
    /// A fixed field or a length-prefixed item runs past the packet's length.
    case truncated
    /// A count from the header or a field (report count, source count,
    /// TWCC packet status count, REMB SSRC count) names more entries than the
    /// packet holds.
    case countBeyondPacket
    /// A feedback message that needs at least one FCI entry has none
    /// (generic NACK, RFC 4585 section 6.2.1).
    case missingFCI
    /// A payload-specific application-layer feedback (FMT 15) without the
    /// 'REMB' identifier (draft-alvestrand-rmcat-remb-03 section 2.2).
    case missingREMBIdentifier
    /// A TWCC status symbol of 3, which the draft reserves.
    case reservedStatusSymbol
    /// More packets in one compound than `RTCPCompoundPacket.maximumPackets`.
    case tooManyPackets
    /// More SDES items in one packet than `SourceDescription.maximumItems`.
    case tooManyItems
    /// An empty buffer.
    case emptyCompound
}
