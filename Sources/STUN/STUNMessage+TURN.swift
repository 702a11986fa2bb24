import Wire

/// The TURN attributes of a STUN message (RFC 8656 section 18), parsed with
/// the same rules as the rest: fixed lengths checked, only the first of a
/// repeated attribute kept, except XOR-PEER-ADDRESS, which a
/// CreatePermission may repeat (section 9.1) and which is kept up to
/// `maxPeerAddresses` times (more: `malformedAttribute`).
package struct TURNAttributes: Hashable, Sendable {
    /// XOR-PEER-ADDRESS values kept per message: a client asking for more
    /// permissions at once gets 400, not an unbounded list.
    package static let maxPeerAddresses = 8

    /// CHANNEL-NUMBER (section 18.1): the number, the RFFU bytes dropped.
    package var channelNumber: UInt16?
    /// LIFETIME (section 18.2), in seconds.
    package var lifetime: UInt32?
    /// Every XOR-PEER-ADDRESS (section 18.3), in order, already un-xored.
    package var xorPeerAddresses: [TransportAddress] = []
    /// DATA (section 18.4): where its value lies in the message.
    package var data: STUNMessage.AttributeLocation?
    /// XOR-RELAYED-ADDRESS (section 18.5), un-xored.
    package var xorRelayedAddress: TransportAddress?
    /// REQUESTED-ADDRESS-FAMILY (section 18.6): 0x01 IPv4, 0x02 IPv6.
    package var requestedAddressFamily: UInt8?
    /// EVEN-PORT (section 18.7): present, and its R bit.
    package var evenPort: Bool?
    /// REQUESTED-TRANSPORT (section 18.8): the IANA protocol number (17: UDP).
    package var requestedTransport: UInt8?
    /// DONT-FRAGMENT (section 18.9).
    package var dontFragment = false
    /// RESERVATION-TOKEN (section 18.10).
    package var reservationToken: UInt64?

    package init() {}

    /// Takes `type` if it is a TURN attribute; false for any other type.
    mutating func process(
        _ type: STUNAttributeType, _ value: inout ByteReader, location: STUNMessage.AttributeLocation,
        transactionID: TransactionID
    ) throws(STUNParseError) -> Bool {
        let bad = STUNParseError.malformedAttribute(type)
        let length = location.valueLength
        switch type {
        case .channelNumber:
            guard length == 4 else { throw bad }
            if channelNumber == nil { channelNumber = try value.uint16(or: bad) }
        case .lifetime:
            guard length == 4 else { throw bad }
            if lifetime == nil { lifetime = try value.uint32(or: bad) }
        case .xorPeerAddress:
            guard xorPeerAddresses.count < Self.maxPeerAddresses else { throw bad }
            xorPeerAddresses.append(try Self.xorAddress(&value, type: type).xored(with: transactionID))
        case .data:
            if data == nil { data = location }
        case .xorRelayedAddress:
            if xorRelayedAddress == nil { xorRelayedAddress = try Self.xorAddress(&value, type: type).xored(with: transactionID) }
        case .requestedAddressFamily:
            guard length == 4 else { throw bad }
            if requestedAddressFamily == nil { requestedAddressFamily = try value.uint8(or: bad) }
        case .evenPort:
            guard length == 1 else { throw bad }
            if evenPort == nil { evenPort = try value.uint8(or: bad) & 0x80 != 0 }
        case .requestedTransport:
            guard length == 4 else { throw bad }
            if requestedTransport == nil { requestedTransport = try value.uint8(or: bad) }
        case .dontFragment:
            guard length == 0 else { throw bad }
            dontFragment = true
        case .reservationToken:
            guard length == 8 else { throw bad }
            if reservationToken == nil { reservationToken = try value.uint64(or: bad) }
        default:
            return false
        }
        return true
    }

    /// XOR-PEER-ADDRESS and XOR-RELAYED-ADDRESS share XOR-MAPPED-ADDRESS's
    /// layout (RFC 8656 sections 18.3 and 18.5); the caller un-xors.
    private static func xorAddress(
        _ value: inout ByteReader, type: STUNAttributeType
    ) throws(STUNParseError)
        -> TransportAddress
    {
        let bad = STUNParseError.malformedAttribute(type)
        try value.skip(1, or: bad)
        guard let family = TransportAddress.Family(rawValue: try value.uint8(or: bad)) else { throw bad }
        let port = try value.uint16(or: bad)
        guard value.remaining == family.addressLength else { throw bad }
        switch family {
        case .ipv4: return TransportAddress(ipv4: try value.uint32(or: bad), port: port)
        case .ipv6:
            let high = try value.uint64(or: bad)
            return TransportAddress(ipv6: high, try value.uint64(or: bad), port: port)
        }
    }
}
