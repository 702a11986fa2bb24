/// Media direction attributes `a=sendrecv`, `a=sendonly`, `a=recvonly`,
/// `a=inactive` (RFC 8866 section 6.7), also used by `a=extmap` (RFC 8285
/// section 5).
package enum Direction: String, Equatable, Sendable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    /// The direction seen from the other side of the connection.
    package var reversed: Direction {
        switch self {
        case .sendonly: .recvonly
        case .recvonly: .sendonly
        case .sendrecv, .inactive: self
        }
    }
}

/// `a=setup` (RFC 4145 section 4, RFC 8842 section 5): which side opens
/// the DTLS association.
package enum SetupRole: String, Equatable, Sendable, CaseIterable {
    case actpass, active, passive, holdconn
}
