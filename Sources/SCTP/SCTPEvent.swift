/// One user message received on an SCTP stream (RFC 8831 section 6.6:
/// one message per data channel send, its PPID saying string or binary).
package struct SCTPMessage: Equatable, Sendable {
    package var stream: UInt16
    /// Payload protocol identifier, host order (RFC 8831 section 8).
    package var ppid: UInt32
    package var unordered: Bool
    package var payload: [UInt8]

    package init(stream: UInt16, ppid: UInt32, unordered: Bool, payload: [UInt8]) {
        self.stream = stream
        self.ppid = ppid
        self.unordered = unordered
        self.payload = payload
    }
}

/// What an `SCTPAssociation` reports through `pollEvent()`.
package enum SCTPEvent: Equatable, Sendable {
    /// The four-way handshake finished (SCTP_COMM_UP).
    case established
    case message(SCTPMessage)
    /// The peer reset this incoming stream (RFC 6525): with data channels,
    /// the channel on it is closed (RFC 8831 section 6.7).
    case streamReset(UInt16)
    /// The association ended (abort, shutdown, or it could not start).
    case closed
}

/// How a message is delivered (RFC 8831 section 6.6, RFC 3758).
package struct SCTPReliability: Equatable, Sendable {
    package var unordered: Bool
    /// nil: fully reliable; n: PR-SCTP, at most n retransmissions (0: sent
    /// once, never retransmitted).
    package var maximumRetransmits: UInt32?

    package init(unordered: Bool, maximumRetransmits: UInt32?) {
        self.unordered = unordered
        self.maximumRetransmits = maximumRetransmits
    }

    package static let reliableOrdered = SCTPReliability(unordered: false, maximumRetransmits: nil)
    package static let unreliableUnordered = SCTPReliability(unordered: true, maximumRetransmits: 0)
}

/// Limits of one association; every queue and length bounded.
package struct SCTPConfiguration: Equatable, Sendable {
    /// Our `a=sctp-port` and the peer's (RFC 8841 section 5): 5000 for
    /// every browser.
    package var localPort: UInt16 = 5000
    package var remotePort: UInt16 = 5000
    /// Inbound and outbound streams asked for in INIT (RFC 4960 section
    /// 3.3.2); each data channel takes one stream id in each direction.
    package var streams: UInt16 = 64
    /// The largest message sent or accepted; advertised as
    /// `a=max-message-size` (RFC 8841 section 6).
    package var maximumMessageSize = 65_536
    /// usrsctp's send and receive buffer, each.
    package var bufferBytes: UInt32 = 262_144
    /// Packets waiting for the owner to take (`pollTransmit`).
    package var maximumQueuedPackets = 256
    /// Events (messages included) waiting for the owner.
    package var maximumQueuedEvents = 256

    package init() {}
}
