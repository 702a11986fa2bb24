import STUN
import Wire

/// The TURN requests (RFC 8656 sections 7 to 12), after authentication.
///
/// Not an open relay: every peer address a client names (CreatePermission,
/// ChannelBind, Send) must be one of `policy.allowed`, this node's own
/// media addresses, or the request gets 403 Forbidden (an indication is
/// dropped). The SFU is the only peer a relay ever talks to.
extension TURNServer {
    typealias Credential = (username: String, key: [UInt8])

    /// Section 7.2.
    mutating func allocate(
        _ message: STUNMessage, key credential: Credential, from client: TURNClient, now: Instant,
        openRelay: (TURNClient, _ evenPort: Bool) -> TransportAddress?
    ) {
        if let existing = allocations[client] {
            if existing.allocateTransaction == message.transactionID {
                output.append(.toClient(client, existing.allocateResponse))
            } else {
                reply(message, .allocationMismatch, key: credential.key, to: client)
            }
            return
        }
        let turn = message.turn
        guard let transport = turn.requestedTransport else {
            reply(message, .badRequest, key: credential.key, to: client)
            return
        }
        guard transport == 17 else {
            reply(message, .unsupportedTransportProtocol, key: credential.key, to: client)
            return
        }
        // EVEN-PORT without its R bit is honoured (the shell binds until
        // the port is even); reserving the next port (R) and
        // RESERVATION-TOKEN are not: WebRTC clients never ask, and section
        // 7.2 lets a server refuse with 508.
        if turn.evenPort == true || turn.reservationToken != nil {
            reply(message, .insufficientCapacity, key: credential.key, to: client)
            return
        }
        guard (allocationsByUser[credential.username] ?? 0) < configuration.maxAllocationsPerUser,
            allocations.count < configuration.maxAllocations
        else {
            counters.quotaRefusals += 1
            reply(message, .allocationQuotaReached, key: credential.key, to: client)
            return
        }
        guard let relay = openRelay(client, turn.evenPort != nil), turn.evenPort == nil || relay.port % 2 == 0 else {
            reply(message, .insufficientCapacity, key: credential.key, to: client)
            return
        }
        if let family = turn.requestedAddressFamily, family != relay.family.rawValue {
            output.append(.releaseRelay(relay))
            reply(message, STUNErrorCode(code: 440, reason: "Address Family not Supported")!, key: credential.key, to: client)
            return
        }
        let lifetime = grantedLifetime(turn.lifetime)
        var b = STUNMessageBuilder(
            type: STUNMessageType(method: .allocate, class: .successResponse), transactionID: message.transactionID)
        try? b.appendXORRelayedAddress(relay)
        try? b.appendLifetime(seconds: lifetime)
        try? b.appendXORMappedAddress(client.address)
        let response = finished(&b, key: credential.key)
        insert(
            TURNAllocation(
                client: client, relay: relay, username: credential.username, key: credential.key,
                expiry: now + .seconds(Int64(lifetime)), allocateTransaction: message.transactionID,
                allocateResponse: response))
        output.append(.toClient(client, response))
    }

    /// Section 7.2's rule: less than the default (or none) gets the
    /// default, more than the maximum the maximum.
    private func grantedLifetime(_ requested: UInt32?) -> UInt32 {
        let defaultSeconds = UInt32(configuration.defaultLifetime.nanoseconds / 1_000_000_000)
        let maxSeconds = UInt32(configuration.maxLifetime.nanoseconds / 1_000_000_000)
        guard let requested, requested > defaultSeconds else { return defaultSeconds }
        return min(requested, maxSeconds)
    }

    /// Section 8: a new lifetime, or 0 to delete.
    mutating func refresh(_ message: STUNMessage, key credential: Credential, from client: TURNClient, now: Instant) {
        guard allocations[client] != nil else {
            reply(message, .allocationMismatch, key: credential.key, to: client)
            return
        }
        let lifetime: UInt32
        if message.turn.lifetime == 0 {
            lifetime = 0
            delete(client)
        } else {
            lifetime = grantedLifetime(message.turn.lifetime)
            allocations[client]?.expiry = now + .seconds(Int64(lifetime))
        }
        var b = STUNMessageBuilder(
            type: STUNMessageType(method: .refresh, class: .successResponse), transactionID: message.transactionID)
        try? b.appendLifetime(seconds: lifetime)
        finish(&b, key: credential.key, to: client)
    }

    /// Section 9 (CreatePermission): each XOR-PEER-ADDRESS must be allowed;
    /// one refused refuses the request and installs none (section 9.2).
    mutating func createPermission(
        _ message: STUNMessage, key credential: Credential, from client: TURNClient, now: Instant
    ) {
        guard let allocation = allocations[client] else {
            reply(message, .allocationMismatch, key: credential.key, to: client)
            return
        }
        let peers = message.turn.xorPeerAddresses
        guard !peers.isEmpty else {
            reply(message, .badRequest, key: credential.key, to: client)
            return
        }
        if let refusal = check(peers, allocation: allocation) {
            reply(message, refusal, key: credential.key, to: client)
            return
        }
        let keys = Set(peers.map(TURNAllocation.permissionKey))
        let added = keys.subtracting(allocation.permissions.keys).count
        guard allocation.permissions.count + added <= configuration.maxPermissionsPerAllocation else {
            reply(message, .insufficientCapacity, key: credential.key, to: client)
            return
        }
        for key in keys { allocations[client]?.permissions[key] = now + configuration.permissionLifetime }
        var b = STUNMessageBuilder(
            type: STUNMessageType(method: .createPermission, class: .successResponse), transactionID: message.transactionID)
        finish(&b, key: credential.key, to: client)
    }

    /// Section 11 (ChannelBind): binds or refreshes a channel to one
    /// allowed peer, and installs or refreshes its permission.
    mutating func channelBind(_ message: STUNMessage, key credential: Credential, from client: TURNClient, now: Instant) {
        guard let allocation = allocations[client] else {
            reply(message, .allocationMismatch, key: credential.key, to: client)
            return
        }
        guard let number = message.turn.channelNumber, ChannelData.channelNumbers.contains(number),
            let peer = message.turn.xorPeerAddresses.first
        else {
            reply(message, .badRequest, key: credential.key, to: client)
            return
        }
        if let refusal = check([peer], allocation: allocation) {
            reply(message, refusal, key: credential.key, to: client)
            return
        }
        // Section 11.2: a number bound to another peer, or a peer bound to
        // another number, is a 400.
        if let bound = allocation.channelsByNumber[number], bound.peer != peer {
            reply(message, .badRequest, key: credential.key, to: client)
            return
        }
        if let boundNumber = allocation.channelsByPeer[peer], boundNumber != number {
            reply(message, .badRequest, key: credential.key, to: client)
            return
        }
        let permissionKey = TURNAllocation.permissionKey(peer)
        let newPermission = allocation.permissions[permissionKey] == nil ? 1 : 0
        guard
            allocation.channelsByNumber[number] != nil
                || allocation.channelsByNumber.count < configuration.maxChannelsPerAllocation,
            allocation.permissions.count + newPermission <= configuration.maxPermissionsPerAllocation
        else {
            reply(message, .insufficientCapacity, key: credential.key, to: client)
            return
        }
        allocations[client]?.channelsByNumber[number] = TURNChannelBinding(
            peer: peer, expiry: now + configuration.channelLifetime)
        allocations[client]?.channelsByPeer[peer] = number
        allocations[client]?.permissions[permissionKey] = now + configuration.permissionLifetime
        var b = STUNMessageBuilder(
            type: STUNMessageType(method: .channelBind, class: .successResponse), transactionID: message.transactionID)
        finish(&b, key: credential.key, to: client)
    }

    /// 443 for a peer of the other family than the relay (section 9.2),
    /// 403 for a peer outside the policy.
    private mutating func check(_ peers: [TransportAddress], allocation: TURNAllocation) -> STUNErrorCode? {
        for peer in peers {
            guard peer.family == allocation.relay.family else { return .peerAddressFamilyMismatch }
            guard policy.allows(peer) else {
                counters.forbidden += 1
                return .forbidden
            }
        }
        return nil
    }

    // MARK: Data

    /// Section 10.2: a Send indication, relayed if the peer has a
    /// permission; dropped silently otherwise (indications get no answer).
    mutating func sendIndication(
        _ message: STUNMessage, _ bytes: UnsafeRawBufferPointer, from client: TURNClient, now: Instant
    ) {
        guard let allocation = allocations[client], let peer = message.turn.xorPeerAddresses.first,
            let data = message.turn.data, allocation.hasPermission(for: peer, now: now), policy.allows(peer),
            data.valueRange.upperBound <= bytes.count
        else {
            counters.droppedFromClient += 1
            return
        }
        counters.relayedToPeer += 1
        output.append(.toPeer(relay: allocation.relay, peer: peer, Array(bytes[data.valueRange])))
    }

    /// Section 12.6: ChannelData from the client, to the channel's peer.
    mutating func channelDataFromClient(_ bytes: UnsafeRawBufferPointer, from client: TURNClient, now: Instant) {
        guard let (number, range) = try? ChannelData.parse(bytes), let allocation = allocations[client],
            let binding = allocation.channelsByNumber[number], binding.expiry > now,
            allocation.hasPermission(for: binding.peer, now: now), policy.allows(binding.peer)
        else {
            counters.droppedFromClient += 1
            return
        }
        counters.relayedToPeer += 1
        output.append(.toPeer(relay: allocation.relay, peer: binding.peer, Array(bytes[range])))
    }

    /// A datagram arrived at `relay` from `peer` (sections 10.3 and 12.7):
    /// over the peer's channel if it has one, else in a Data indication;
    /// dropped without a permission or outside the policy.
    package mutating func handlePeer(
        _ bytes: UnsafeRawBufferPointer, relay: TransportAddress, from peer: TransportAddress, now: Instant
    ) {
        guard let client = clientsByRelay[relay], let allocation = allocations[client],
            allocation.hasPermission(for: peer, now: now), policy.allows(peer)
        else {
            counters.droppedFromPeer += 1
            return
        }
        counters.relayedToClient += 1
        if let number = allocation.channelsByPeer[peer], let binding = allocation.channelsByNumber[number],
            binding.expiry > now
        {
            output.append(.toClient(client, ChannelData.build(channel: number, data: bytes, padded: client.transport.isStream)))
            return
        }
        var b = STUNMessageBuilder(type: STUNMessageType(method: .data, class: .indication), transactionID: .random())
        try? b.appendXORPeerAddress(peer)
        try? b.appendData(Array(bytes))
        output.append(.toClient(client, b.bytes))
    }

    package mutating func handlePeer(_ bytes: [UInt8], relay: TransportAddress, from peer: TransportAddress, now: Instant) {
        bytes.withUnsafeBytes { handlePeer($0, relay: relay, from: peer, now: now) }
    }
}
