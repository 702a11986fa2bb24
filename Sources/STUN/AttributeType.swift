/// A STUN attribute type (RFC 8489 section 14 and 18.3; ICE's in RFC 8445
/// section 16.1).
///
/// Types 0x0000..0x7FFF are comprehension-required: a receiver that does not
/// understand one must reject the request with 420 and list it in
/// UNKNOWN-ATTRIBUTES. Types 0x8000..0xFFFF are comprehension-optional and
/// are skipped when unknown.
public struct STUNAttributeType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public var isComprehensionRequired: Bool { rawValue < 0x8000 }

    // Comprehension-required.
    public static let mappedAddress = STUNAttributeType(0x0001)
    public static let username = STUNAttributeType(0x0006)
    public static let messageIntegrity = STUNAttributeType(0x0008)
    public static let errorCode = STUNAttributeType(0x0009)
    public static let unknownAttributes = STUNAttributeType(0x000A)
    public static let realm = STUNAttributeType(0x0014)
    public static let nonce = STUNAttributeType(0x0015)
    public static let messageIntegritySHA256 = STUNAttributeType(0x001C)
    public static let xorMappedAddress = STUNAttributeType(0x0020)
    public static let priority = STUNAttributeType(0x0024)
    public static let useCandidate = STUNAttributeType(0x0025)
    // TURN (RFC 8656 section 18).
    public static let channelNumber = STUNAttributeType(0x000C)
    public static let lifetime = STUNAttributeType(0x000D)
    public static let xorPeerAddress = STUNAttributeType(0x0012)
    public static let data = STUNAttributeType(0x0013)
    public static let xorRelayedAddress = STUNAttributeType(0x0016)
    public static let requestedAddressFamily = STUNAttributeType(0x0017)
    public static let evenPort = STUNAttributeType(0x0018)
    public static let requestedTransport = STUNAttributeType(0x0019)
    public static let dontFragment = STUNAttributeType(0x001A)
    public static let reservationToken = STUNAttributeType(0x0022)

    // Comprehension-optional.
    public static let software = STUNAttributeType(0x8022)
    public static let fingerprint = STUNAttributeType(0x8028)
    public static let iceControlled = STUNAttributeType(0x8029)
    public static let iceControlling = STUNAttributeType(0x802A)

    public var description: String {
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
