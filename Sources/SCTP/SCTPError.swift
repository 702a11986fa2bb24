/// What an `SCTPAssociation` refuses or reports.
package enum SCTPError: Error, Equatable, Sendable {
    /// usrsctp could not make the socket (out of memory, bad option).
    case setupFailed
    /// The message is larger than the association's maximum (RFC 8841
    /// `a=max-message-size`, which we advertise).
    case messageTooLarge(size: Int, limit: Int)
    /// The stream id is beyond the streams we allowed.
    case streamOutOfRange(UInt16)
    /// usrsctp's send buffer is full: the peer reads slower than we send.
    case sendBufferFull
    /// The association is not (or no longer) established.
    case notEstablished
    /// usrsctp refused the send with this errno.
    case sendFailed(errno: Int32)
}
