/// Why an RTP packet was rejected. Bad network input costs one packet,
/// never the process: every length and count from the wire is checked
/// against the bytes present before it is used.
package enum RTPParseError: Error, Equatable, Sendable {
    /// Fewer bytes than the fixed header, the CSRC list or the extension
    /// header announce.
    case truncated
    /// The version field is not 2 (RFC 3550 section 5.1).
    case unsupportedVersion(UInt8)
    /// The padding count is 0 or larger than the bytes after the header
    /// (RFC 3550 section 5.1, P bit).
    case invalidPadding
    /// An RFC 8285 element runs past the end of the extension block.
    case malformedExtension
}
