import Wire

/// An ICE candidate for the single RTP/RTCP component of a BUNDLEd,
/// rtcp-muxed WebRTC transport (RFC 8445 section 5.1; RFC 8843, RFC 5761).
///
/// The `a=candidate` text form belongs to the SDP target; this is the value
/// it parses into and serializes from.
public struct ICECandidate: Hashable, Sendable, CustomStringConvertible {
    /// RFC 8445 section 5.1.1: host, server-reflexive, peer-reflexive, relayed.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case host
        case serverReflexive = "srflx"
        case peerReflexive = "prflx"
        case relayed = "relay"

        /// The recommended type preferences of RFC 8445 section 5.1.2.2.
        public var typePreference: UInt32 {
            switch self {
            case .host: 126
            case .peerReflexive: 110
            case .serverReflexive: 100
            case .relayed: 0
            }
        }
    }

    /// Only UDP: TCP candidates (RFC 6544) are not supported.
    public enum Transport: String, Hashable, Sendable {
        case udp = "UDP"
    }

    /// The one component of a WebRTC transport with rtcp-mux (RFC 8445
    /// section 5.1.2.1 numbers components from 1, RTP being 1).
    public static let rtpComponent: UInt16 = 1

    public var foundation: String
    public var component: UInt16
    public var transport: Transport
    public var priority: UInt32
    public var address: TransportAddress
    public var kind: Kind
    /// The base (srflx, prflx) or server address (relay), when known.
    public var relatedAddress: TransportAddress?

    public init(
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
    public static func host(_ address: TransportAddress, interfaceIndex: Int = 0) -> ICECandidate {
        let local = localPreference(family: address.family, interfaceIndex: interfaceIndex)
        return ICECandidate(
            foundation: foundation(kind: .host, address: address),
            priority: priority(kind: .host, localPreference: local),
            address: address, kind: .host)
    }

    /// RFC 8445 section 5.1.2.1:
    /// `2^24 * type preference + 2^8 * local preference + (256 - component)`.
    /// The component is clamped to 1...256, so the result never overflows.
    public static func priority(
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
    public static func localPreference(family: TransportAddress.Family, interfaceIndex: Int = 0) -> UInt16 {
        let index = UInt16(min(max(interfaceIndex, 0), 1023))
        return (family == .ipv6 ? 65535 : 32767) - index
    }

    /// A foundation equal for candidates of the same type and IP address
    /// (RFC 8445 section 5.1.1.3, with no STUN/TURN server in play): an
    /// FNV-1a hash of both, in decimal (1 to 32 ice-chars as RFC 8839
    /// section 5.1 asks).
    public static func foundation(kind: Kind, address: TransportAddress) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in Array(kind.rawValue.utf8) + address.addressBytes {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        return String(hash)
    }

    public var description: String {
        "candidate \(foundation) \(component) \(transport.rawValue) \(priority) \(address) typ \(kind.rawValue)"
    }
}
