import Wire

/// An ICE candidate for the single RTP/RTCP component of a BUNDLEd,
/// rtcp-muxed WebRTC transport (RFC 8445 section 5.1; RFC 8843, RFC 5761).
///
/// The `a=candidate` text form belongs to the SDP target; this is the value
/// it parses into and serializes from.
package struct ICECandidate: Hashable, Sendable, CustomStringConvertible {
    /// RFC 8445 section 5.1.1: host, server-reflexive, peer-reflexive, relayed.
    package enum Kind: String, Hashable, Sendable, CaseIterable {
        case host
        case serverReflexive = "srflx"
        case peerReflexive = "prflx"
        case relayed = "relay"

        /// The recommended type preferences of RFC 8445 section 5.1.2.2.
        package var typePreference: UInt32 {
            switch self {
            case .host: 126
            case .peerReflexive: 110
            case .serverReflexive: 100
            case .relayed: 0
            }
        }
    }

    /// UDP, or a passive TCP candidate (RFC 6544 section 4.5,
    /// `tcptype passive`): ours accept connections and never open them, so
    /// passive is the only TCP kind this agent writes.
    package enum Transport: String, Hashable, Sendable {
        case udp = "UDP"
        case tcpPassive = "TCP"
    }

    /// The one component of a WebRTC transport with rtcp-mux (RFC 8445
    /// section 5.1.2.1 numbers components from 1, RTP being 1).
    package static let rtpComponent: UInt16 = 1

    package var foundation: String
    package var component: UInt16
    package var transport: Transport
    package var priority: UInt32
    package var address: TransportAddress
    package var kind: Kind
    /// The base (srflx, prflx) or server address (relay), when known.
    package var relatedAddress: TransportAddress?

    package init(
        foundation: String, component: UInt16 = ICECandidate.rtpComponent, transport: Transport = .udp,
        priority: UInt32, address: TransportAddress, kind: Kind, relatedAddress: TransportAddress? = nil
    ) {
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.kind = kind
        self.relatedAddress = relatedAddress
    }

    /// A host candidate on an address the shell has bound, with the
    /// RFC 8445 section 5.1.2.1 priority and a foundation derived from type
    /// and IP address (section 5.1.1.3).
    package static func host(_ address: TransportAddress, interfaceIndex: Int = 0) -> ICECandidate {
        let local = localPreference(family: address.family, interfaceIndex: interfaceIndex)
        return ICECandidate(
            foundation: foundation(kind: .host, address: address),
            priority: priority(kind: .host, localPreference: local),
            address: address, kind: .host)
    }

    /// A passive TCP host candidate (RFC 6544 section 4.5) on a listening
    /// address. Its address is marked TCP, so it never equals the UDP one.
    package static func hostTCPPassive(_ address: TransportAddress, interfaceIndex: Int = 0) -> ICECandidate {
        ICECandidate(
            foundation: foundation(kind: .host, address: address.overTCP), transport: .tcpPassive,
            priority: tcpPriority(
                typePreference: tcpHostTypePreference, directionPreference: passiveHostDirectionPreference,
                otherPreference: UInt16(8191 - min(max(interfaceIndex, 0), 1023))),
            address: address.overTCP, kind: .host)
    }

    /// The type preference of a TCP host candidate. RFC 6544 section 4.2
    /// asks agents to prefer UDP where both work ("UDP ... generally
    /// better for real-time media"): 90 is below every UDP host (126),
    /// peer-reflexive (110) and server-reflexive (100) candidate, so a
    /// client that reaches us over UDP never selects TCP, yet above relayed
    /// candidates (0), so TCP beats a TURN relay.
    package static let tcpHostTypePreference: UInt32 = 90

    /// RFC 6544 section 4.2's direction preference for a passive host
    /// candidate (active 6, passive 4, simultaneous-open 2 for host).
    package static let passiveHostDirectionPreference: UInt16 = 4

    /// RFC 6544 section 4.2: the RFC 8445 formula with a local preference
    /// of `2^13 * direction-pref + other-pref` (direction 0...7, other
    /// 0...8191; larger values are clamped).
    package static func tcpPriority(
        typePreference: UInt32, directionPreference: UInt16, otherPreference: UInt16,
        component: UInt16 = ICECandidate.rtpComponent
    ) -> UInt32 {
        let local = UInt32(min(directionPreference, 7)) << 13 | UInt32(min(otherPreference, 8191))
        let c = UInt32(min(max(component, 1), 256))
        return min(typePreference, 126) << 24 | local << 8 | (256 - c)
    }

    /// RFC 8445 section 5.1.2.1:
    /// `2^24 * type preference + 2^8 * local preference + (256 - component)`.
    /// The component is clamped to 1...256, so the result never overflows.
    package static func priority(
        kind: Kind, localPreference: UInt16, component: UInt16 = ICECandidate.rtpComponent
    ) -> UInt32 {
        let c = UInt32(min(max(component, 1), 256))
        return kind.typePreference << 24 | UInt32(localPreference) << 8 | (256 - c)
    }

    /// The local preference (RFC 8445 section 5.1.2.1, 0...65535) this agent
    /// gives an address: IPv6 addresses rank above IPv4 ones (65535 against
    /// 32767), following the default address selection of RFC 6724 that
    /// RFC 8421 section 4 builds on; within a family, the caller's interface
    /// order lowers it by one per index (0...1023), so every host candidate
    /// of a multihomed machine gets a distinct priority.
    package static func localPreference(family: TransportAddress.Family, interfaceIndex: Int = 0) -> UInt16 {
        let index = UInt16(min(max(interfaceIndex, 0), 1023))
        return (family == .ipv6 ? 65535 : 32767) - index
    }

    /// A foundation equal for candidates of the same type, IP address and
    /// transport protocol (RFC 8445 section 5.1.1.3, with no STUN/TURN
    /// server in play): an FNV-1a hash of them, in decimal (1 to 32
    /// ice-chars as RFC 8839 section 5.1 asks). UDP foundations hash no
    /// protocol byte, so they are what they were before TCP candidates.
    package static func foundation(kind: Kind, address: TransportAddress) -> String {
        var hash: UInt32 = 0x811C_9DC5
        let tcp: [UInt8] = address.transportProtocol == TransportAddress.TransportProtocol.tcp ? Array("tcp".utf8) : []
        for byte in Array(kind.rawValue.utf8) + address.addressBytes + tcp {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        return String(hash)
    }

    package var description: String {
        "candidate \(foundation) \(component) \(transport.rawValue) \(priority) \(address) typ \(kind.rawValue)"
            + (transport == .tcpPassive ? " tcptype passive" : "")
    }
}
