import Wire

/// Limits and lifetimes of the TURN server (RFC 8656); docs/SECURITY.md.
package struct TURNServerConfiguration: Sendable, Equatable {
    /// REALM (RFC 8489 section 14.9) of the long-term credentials.
    package var realm = "swiftlet"
    /// An allocation's lifetime when the client asks for less or nothing
    /// (RFC 8656 section 7.2: 10 minutes).
    package var defaultLifetime: Duration = .seconds(600)
    /// The most a client may ask for (section 7.2 suggests 1 hour).
    package var maxLifetime: Duration = .seconds(3600)
    /// Fixed by the RFC: 300 s for a permission (section 9), 600 s for a
    /// channel binding (section 12).
    package var permissionLifetime: Duration = .seconds(300)
    package var channelLifetime: Duration = .seconds(600)
    /// How long a NONCE stays good; then 438 Stale Nonce and a fresh one
    /// (RFC 8489 section 9.2.4).
    package var nonceLifetime: Duration = .seconds(3600)
    /// Allocations on this node; one more: 486 Allocation Quota Reached.
    package var maxAllocations = 1000
    /// Allocations one username (one identity's credentials) holds; one
    /// more: 486.
    package var maxAllocationsPerUser = 8
    /// Permissions (peer IPs) and channels per allocation; more: 508
    /// Insufficient Capacity.
    package var maxPermissionsPerAllocation = 16
    package var maxChannelsPerAllocation = 16
    /// SOFTWARE in responses (RFC 8489 section 14.14); empty: none.
    package var software = "swiftlet"

    package init() {}
}

/// Where a relay may send: this node's own media addresses only, so the
/// server is not an open relay (docs/SECURITY.md). A CreatePermission,
/// ChannelBind or Send toward anything else is refused (403, or dropped
/// for an indication), and datagrams arriving at a relay from anything
/// else are dropped.
package struct TURNPeerPolicy: Sendable, Equatable {
    package var allowed: Set<TransportAddress>

    package init(allowed: Set<TransportAddress>) { self.allowed = allowed }

    package func allows(_ peer: TransportAddress) -> Bool { allowed.contains(peer) }
}

/// How a client reached the server; with its address (and, on a stream,
/// the connection) it is the 5-tuple that keys an allocation (RFC 8656
/// section 2.2): the server's side is fixed per listener.
package enum TURNClientTransport: UInt8, Hashable, Sendable, CustomStringConvertible {
    case udp, tcp, tls
    package var isStream: Bool { self != .udp }
    package var description: String {
        switch self {
        case .udp: "udp"
        case .tcp: "tcp"
        case .tls: "tls"
        }
    }
}

/// One client 5-tuple. `connection` tells apart two TCP connections from
/// the same address and port over time (0 for UDP).
package struct TURNClient: Hashable, Sendable, CustomStringConvertible {
    package var transport: TURNClientTransport
    package var address: TransportAddress
    package var connection: UInt64

    package init(transport: TURNClientTransport, address: TransportAddress, connection: UInt64 = 0) {
        self.transport = transport
        self.address = address
        self.connection = connection
    }

    package var description: String { "\(transport):\(address)" + (connection == 0 ? "" : "#\(connection)") }
}

/// What the shell must do for the engine.
package enum TURNOutput: Equatable, Sendable {
    /// Send `bytes` to the client (a datagram, or stream bytes already framed).
    case toClient(TURNClient, [UInt8])
    /// Send `bytes` from the relay socket bound at `relay` to `peer`.
    case toPeer(relay: TransportAddress, peer: TransportAddress, [UInt8])
    /// The allocation at `relay` is gone: close its socket.
    case releaseRelay(TransportAddress)
}
