/// Why the reply stream from Redis cannot be read further. Each ends the
/// connection: RESP has no way to resynchronise inside a stream.
package enum RedisProtocolError: Error, Equatable, Sendable {
    /// Not RESP (hiredis's reader said why).
    case malformed(String)
    /// An array longer than `RedisReplyReader.Limits.maxElements`.
    case tooManyElements
    /// More unread bytes than `Limits.maxBufferedBytes`: a reply larger
    /// than we accept, or a peer that is not Redis.
    case replyTooLarge
    /// The reader could not be created.
    case outOfMemory
}
