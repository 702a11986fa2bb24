/// What kind of address a `TransportAddress` holds, for choosing which
/// local addresses to offer as ICE host candidates (RFC 8445 section
/// 5.1.1.1 gathers one per interface address; these say which ones a
/// remote client could ever reach).
extension TransportAddress {
    /// 0.0.0.0 or :: — "any address": never a destination (RFC 1122
    /// section 3.2.1.3, RFC 4291 section 2.5.2), so never a candidate.
    package var isUnspecified: Bool { addressBytes.allSatisfy { $0 == 0 } }

    /// 127.0.0.0/8 (RFC 1122 section 3.2.1.3) or ::1 (RFC 4291 section
    /// 2.5.3): reachable only from this machine.
    package var isLoopback: Bool {
        switch family {
        case .ipv4: addressByte(at: 0) == 127
        case .ipv6: ipv6.map { $0.high == 0 && $0.low == 1 } ?? false
        }
    }

    /// 169.254.0.0/16 (RFC 3927) or fe80::/10 (RFC 4291 section 2.5.6):
    /// valid on one link only, and for IPv6 meaningful only with a zone,
    /// which an SDP candidate cannot carry.
    package var isLinkLocal: Bool {
        switch family {
        case .ipv4: addressByte(at: 0) == 169 && addressByte(at: 1) == 254
        case .ipv6: addressByte(at: 0) == 0xFE && addressByte(at: 1) & 0xC0 == 0x80
        }
    }

    /// 224.0.0.0/4 or ff00::/8: a group, not a host.
    package var isMulticast: Bool {
        switch family {
        case .ipv4: addressByte(at: 0) & 0xF0 == 0xE0
        case .ipv6: addressByte(at: 0) == 0xFF
        }
    }
}
