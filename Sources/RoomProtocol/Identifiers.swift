/// A participant as the room protocol names it: server-assigned, stable
/// across reconnects within the grace period ("PA_" + 12 characters).
package struct ParticipantID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    package let rawValue: String
    package init(_ rawValue: String) { self.rawValue = rawValue }
    package init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
    package static func < (a: ParticipantID, b: ParticipantID) -> Bool { a.rawValue < b.rawValue }
    package var description: String { rawValue }
}

/// A call between two participants ("CA_" + 12 characters).
package struct CallID: Hashable, Sendable, Codable, CustomStringConvertible {
    package let rawValue: String
    package init(_ rawValue: String) { self.rawValue = rawValue }
    package init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
    package var description: String { rawValue }
}

/// How a room carries media, chosen when the room is created.
package enum RoomMode: String, Sendable, Codable, Equatable {
    /// Media goes through the server (selective forwarding).
    case sfu
    /// The server relays signalling between each pair; media is peer to peer.
    case mesh
}
