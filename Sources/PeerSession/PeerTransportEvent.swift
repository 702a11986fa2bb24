import DTLS
import SCTP
import Wire

/// What a `PeerTransport` tells its owner; drained with `pollEvent()`.
package enum PeerTransportEvent: Equatable, Sendable {
    /// ICE selected an address (again, after a handover): media goes there.
    case selectedAddressChanged(TransportAddress)
    /// DTLS finished and the peer's certificate matched its SDP
    /// fingerprint: SRTP keys are installed, media may flow.
    case connected(SRTPProfile)
    /// The transport is dead: ICE failed or lost consent, or DTLS failed.
    /// Terminal; the owner ends the session.
    case failed(PeerTransportFailure)
    /// The peer closed DTLS (close_notify). Terminal.
    case closed
    /// Data channels: the association came up or ended, a channel opened
    /// or closed, a message arrived (RFC 8831).
    case dataChannel(DataChannelEvent)
}

package enum PeerTransportFailure: Equatable, Sendable, Error {
    /// No valid ICE check within the connect timeout, or checks failed.
    case iceFailed
    /// No consent for 30 s (RFC 7675 section 5.1).
    case consentExpired
    case dtls(DTLSError)
    /// DTLS succeeded with material SRTP cannot use (should not happen:
    /// both sides offer only profiles we implement).
    case srtpSetupFailed
}

/// What `PeerTransport.receive` made of one datagram.
package enum ReceivedDatagram: Equatable, Sendable {
    /// Consumed by ICE or DTLS, or dropped (see the transport's counters).
    case handled
    /// An SRTP packet, authenticated and decrypted in place: the first
    /// `length` bytes of the buffer are now the RTP packet.
    case rtp(length: Int)
    /// An SRTCP compound, authenticated and decrypted in place.
    case rtcp(length: Int)
}

/// A control datagram (STUN or DTLS) to send. `from` is the local address
/// it must leave from, for agents with several sockets; nil means the one
/// the transport lives on.
package struct OutgoingDatagram: Equatable, Sendable {
    package var bytes: [UInt8]
    package var to: TransportAddress
    package var from: TransportAddress?
}

/// Why media packets were dropped; counted, never thrown.
package struct PeerTransportCounters: Equatable, Sendable {
    /// SRTP or SRTCP before keys were installed.
    package var mediaBeforeKeys = 0
    /// Media from an address that never passed an ICE check.
    package var mediaFromUnvalidatedAddress = 0
    /// Authentication or replay failures in SRTP/SRTCP.
    package var srtpRejected = 0
    /// Datagrams that are none of STUN, DTLS, RTP, RTCP (RFC 7983).
    package var unknownDatagrams = 0
    /// Outgoing media dropped because no address is selected or keys are
    /// missing.
    package var sendsWithoutRoute = 0
    /// SRTP or SRTCP from a new SSRC once `maxInboundSSRCs` SSRCs are
    /// known: dropped before libsrtp sees it.
    package var ssrcLimitExceeded = 0
    /// Outgoing RTP refused because its index was protected before (a
    /// second packet under one index would reuse the AES-GCM IV).
    package var repeatedIndexRefused = 0
    package init() {}
}
