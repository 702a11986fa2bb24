/// A signalling connection (one WebSocket, or one WHIP/WHEP session),
/// numbered by the shell.
public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: ConnectionID, b: ConnectionID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "c\(rawValue)" }
}

/// A participant as the room protocol names it: server-assigned, stable
/// across reconnects within the grace period ("PA_" + 12 characters).
public struct ParticipantID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
    public static func < (a: ParticipantID, b: ParticipantID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { rawValue }
}

/// A call between two participants ("CA_" + 12 characters).
public struct CallID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
    public var description: String { rawValue }
}

/// How a room carries media, chosen when the room is created.
public enum RoomMode: String, Sendable, Codable, Equatable {
    /// Media goes through the server (selective forwarding).
    case sfu
    /// The server relays signalling between each pair; media is peer to peer.
    case mesh
}

/// What an access token allows (docs/TOKENS.md).
public struct Grants: Hashable, Sendable, Codable {
    public var publish: Bool
    public var subscribe: Bool
    public var admin: Bool
    public init(publish: Bool = false, subscribe: Bool = false, admin: Bool = false) {
        self.publish = publish
        self.subscribe = subscribe
        self.admin = admin
    }
}

/// Makes identifiers. Injected so tests get predictable ones; the server
/// uses random ones (ids are visible to other participants and must not be
/// guessable: a call is addressed by participant id).
public protocol IdentifierSource {
    mutating func next(prefix: String) -> String
}

/// Sequential identifiers, for tests and reproducible simulations.
public struct SequentialIdentifiers: IdentifierSource {
    private var counter = 0
    public init() {}
    public mutating func next(prefix: String) -> String {
        counter += 1
        return prefix + String(counter)
    }
}
