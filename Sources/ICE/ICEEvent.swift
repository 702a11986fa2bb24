import Wire

/// The connection state an agent reports (the RTCIceTransportState subset
/// that a single-component agent can reach).
package enum ICEConnectionState: Hashable, Sendable {
    /// Nothing received or sent yet.
    case new
    /// Checks are under way; no pair is selected.
    case checking
    /// A pair is selected and consent is fresh.
    case connected
    /// Terminal until an ICE restart: checks failed, the connect timeout
    /// passed, or consent expired (RFC 7675 section 5.1).
    case failed
}

/// The role of an agent (RFC 8445 section 6.1.1). A lite agent is always
/// controlled.
package enum ICERole: Hashable, Sendable {
    case controlling
    case controlled
}

/// What an agent tells its owner; drained with `pollEvent()`.
package enum ICEEvent: Hashable, Sendable {
    case stateChanged(ICEConnectionState)
    /// Lite agent: media now goes to this address (it passed a valid,
    /// nominated check).
    case selectedAddressChanged(TransportAddress)
    /// Full agent: media now goes from `local` to `remote`.
    case selectedPairChanged(local: TransportAddress, remote: TransportAddress)
    /// No proof of consent for 30 s (RFC 7675 section 5.1): media to the
    /// selected address must stop. Followed by `.stateChanged(.failed)`.
    case consentExpired
    /// The full agent changed role after a role conflict (RFC 8445
    /// sections 7.2.5.1 and 7.3.1.1).
    case roleChanged(ICERole)
}
