/// What can go wrong in BotMedia: bad parameters, a codec library refusing
/// to work, or a cached clip file that does not parse.
package enum BotMediaError: Error, Equatable, Sendable {
    /// A parameter is out of the range the function documents.
    case invalidParameter
    /// libvpx or libopus returned this error code.
    case codec(Int32)
    /// The caller's buffer cannot hold the packet.
    case bufferTooSmall(needed: Int)
    /// Serialized clip: the input ends before a field.
    case truncated
    /// Serialized clip: the first bytes are not the clip magic.
    case badMagic
    /// Serialized clip: a format version this code does not read.
    case unsupportedVersion(UInt8)
    /// Serialized clip: a field holds a value outside its documented range.
    case malformed
    /// Serialized clip: bytes follow the last frame.
    case trailingBytes
}
