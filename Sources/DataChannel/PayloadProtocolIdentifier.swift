/// SCTP payload protocol identifiers of WebRTC data channels (RFC 8831
/// section 8, IANA "SCTP Payload Protocol Identifiers").
package enum PayloadProtocolIdentifier: UInt32, Sendable, Equatable {
    /// DCEP (RFC 8832 section 8.1).
    case dcep = 50
    case string = 51
    case binary = 53
    /// An empty message cannot be sent as an SCTP user message of length
    /// zero, so it travels as one zero byte with this PPID (RFC 8831
    /// section 6.6).
    case emptyString = 56
    case emptyBinary = 57

    /// String or binary, for a user message (not DCEP); nil for anything
    /// else, including the deprecated partial PPIDs 52 and 54.
    package var isText: Bool? {
        switch self {
        case .string, .emptyString: true
        case .binary, .emptyBinary: false
        case .dcep: nil
        }
    }

    package var isEmpty: Bool { self == .emptyString || self == .emptyBinary }
}
