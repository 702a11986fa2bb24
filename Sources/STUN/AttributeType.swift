/// A STUN attribute type (RFC 8489 section 14 and 18.3; ICE's in RFC 8445
/// section 16.1).
///
/// Types 0x0000..0x7FFF are comprehension-required: a receiver that does not
/// understand one must reject the request with 420 and list it in
/// UNKNOWN-ATTRIBUTES. Types 0x8000..0xFFFF are comprehension-optional and
/// are skipped when unknown.
package struct STUNAttributeType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt16
    package init(rawValue: UInt16) { self.rawValue = rawValue }
    package init(_ rawValue: UInt16) { self.rawValue = rawValue }

    package var isComprehensionRequired: Bool { rawValue < 0x8000 }

    // Comprehension-required.
    package static let mappedAddress = STUNAttributeType(0x0001)
    package static let username = STUNAttributeType(0x0006)
    package static let messageIntegrity = STUNAttributeType(0x0008)
    package static let errorCode = STUNAttributeType(0x0009)
    package static let unknownAttributes = STUNAttributeType(0x000A)
    package static let realm = STUNAttributeType(0x0014)
    package static let nonce = STUNAttributeType(0x0015)
    package static let messageIntegritySHA256 = STUNAttributeType(0x001C)
    package static let xorMappedAddress = STUNAttributeType(0x0020)
    package static let priority = STUNAttributeType(0x0024)
    package static let useCandidate = STUNAttributeType(0x0025)
    // TURN (RFC 8656 section 18).
    package static let channelNumber = STUNAttributeType(0x000C)
    package static let lifetime = STUNAttributeType(0x000D)
    package static let xorPeerAddress = STUNAttributeType(0x0012)
    package static let data = STUNAttributeType(0x0013)
    package static let xorRelayedAddress = STUNAttributeType(0x0016)
    package static let requestedAddressFamily = STUNAttributeType(0x0017)
    package static let evenPort = STUNAttributeType(0x0018)
    package static let requestedTransport = STUNAttributeType(0x0019)
    package static let dontFragment = STUNAttributeType(0x001A)
    package static let reservationToken = STUNAttributeType(0x0022)

    // Comprehension-optional.
    package static let software = STUNAttributeType(0x8022)
    package static let fingerprint = STUNAttributeType(0x8028)
    package static let iceControlled = STUNAttributeType(0x8029)
    package static let iceControlling = STUNAttributeType(0x802A)

    package var description: String {
        switch self {
        case .mappedAddress: "MAPPED-ADDRESS"
        case .username: "USERNAME"
        case .messageIntegrity: "MESSAGE-INTEGRITY"
        case .errorCode: "ERROR-CODE"
        case .unknownAttributes: "UNKNOWN-ATTRIBUTES"
        case .realm: "REALM"
        case .nonce: "NONCE"
        case .messageIntegritySHA256: "MESSAGE-INTEGRITY-SHA256"
        case .xorMappedAddress: "XOR-MAPPED-ADDRESS"
        case .priority: "PRIORITY"
        case .useCandidate: "USE-CANDIDATE"
        case .channelNumber: "CHANNEL-NUMBER"
        case .lifetime: "LIFETIME"
        case .xorPeerAddress: "XOR-PEER-ADDRESS"
        case .data: "DATA"
        case .xorRelayedAddress: "XOR-RELAYED-ADDRESS"
        case .requestedAddressFamily: "REQUESTED-ADDRESS-FAMILY"
        case .evenPort: "EVEN-PORT"
        case .requestedTransport: "REQUESTED-TRANSPORT"
        case .dontFragment: "DONT-FRAGMENT"
        case .reservationToken: "RESERVATION-TOKEN"
        case .software: "SOFTWARE"
        case .fingerprint: "FINGERPRINT"
        case .iceControlled: "ICE-CONTROLLED"
        case .iceControlling: "ICE-CONTROLLING"
        default: "0x" + String(rawValue, radix: 16)
        }
    }
}
