import STUN
import Wire

/// One allocation (RFC 8656 section 2.2): a relayed transport address for
/// one client 5-tuple, with its permissions (section 9, keyed by the
/// peer's IP: the port does not count) and channel bindings (section 12),
/// each with its own expiry.
struct TURNAllocation {
    let client: TURNClient
    let relay: TransportAddress
    /// The username whose key signed the Allocate; every later request on
    /// the allocation must use the same (RFC 8656 section 7.2, 441).
    let username: String
    let key: [UInt8]
    var expiry: Instant
    /// The Allocate's transaction id and success response, to answer a
    /// retransmission the same way (RFC 8656 section 7.2, "retransmitted").
    let allocateTransaction: TransactionID
    let allocateResponse: [UInt8]
    /// Peer IP (port zeroed) to expiry.
    var permissions: [TransportAddress: Instant] = [:]
    var channelsByNumber: [UInt16: TURNChannelBinding] = [:]
    var channelsByPeer: [TransportAddress: UInt16] = [:]

    static func permissionKey(_ peer: TransportAddress) -> TransportAddress {
        var key = peer
        key.port = 0
        return key
    }

    func hasPermission(for peer: TransportAddress, now: Instant) -> Bool {
        guard let expiry = permissions[Self.permissionKey(peer)] else { return false }
        return expiry > now
    }

    /// Forgets expired permissions and channels (a channel number stays
    /// reserved for 5 more minutes after expiry, RFC 8656 section 12.2,
    /// so a late packet cannot reach a new peer: kept here as `expiry +
    /// 300 s` before removal).
    mutating func prune(now: Instant) {
        permissions = permissions.filter { $0.value > now }
        for (number, binding) in channelsByNumber where binding.expiry + .seconds(300) <= now {
            channelsByNumber[number] = nil
            if channelsByPeer[binding.peer] == number { channelsByPeer[binding.peer] = nil }
        }
    }
}

struct TURNChannelBinding {
    let peer: TransportAddress
    var expiry: Instant
}
