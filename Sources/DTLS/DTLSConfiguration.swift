import Wire

/// Tunables of a `DTLSEndpoint`. The defaults are what WebRTC peers expect.
package struct DTLSConfiguration: Sendable {
    /// SRTP profiles to offer (client) or accept (server), most preferred
    /// first. As a server, OpenSSL picks the first of ours that the client
    /// also offers (FACTS.md), so this order decides the profile.
    package var srtpProfiles: [SRTPProfile] = SRTPProfile.defaultPreference
    /// Largest datagram OpenSSL may write (UDP payload). 1200 keeps DTLS
    /// inside the path MTU of every network WebRTC meets, like ICE's
    /// conservative sizing.
    package var maximumDatagramSize: Int = 1200
    /// First retransmission timeout: 1 s (RFC 6347 section 4.2.4.1).
    package var initialRetransmissionInterval: Duration = .seconds(1)
    /// Doubling stops here: 60 s (RFC 6347 section 4.2.4.1, RFC 6298).
    package var maximumRetransmissionInterval: Duration = .seconds(60)
    /// Retransmissions of one flight before the handshake fails with
    /// `.timeout`. With the defaults, 6 means giving up 123 s after the
    /// flight first left (1 + 2 + 4 + 8 + 16 + 32 + 60 s). OpenSSL itself
    /// aborts after 12, so keep this below that.
    package var maximumRetransmissions: Int = 6

    package init() {}
}
