/// A signalling connection (one WebSocket, or one WHIP/WHEP session),
/// numbered by the shell.
package struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let rawValue: UInt64
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }
    package static func < (a: ConnectionID, b: ConnectionID) -> Bool { a.rawValue < b.rawValue }
    package var description: String { "c\(rawValue)" }
}

/// What an access token allows (docs/TOKENS.md).
package struct Grants: Hashable, Sendable, Codable {
    package var publish: Bool
    package var subscribe: Bool
    package var admin: Bool
    /// Data channel messages relayed to the room (docs/TOKENS.md); nil
    /// when the token does not say, which means the `publish` grant.
    package var publishData: Bool?
    package init(publish: Bool = false, subscribe: Bool = false, admin: Bool = false, publishData: Bool? = nil) {
        self.publish = publish
        self.subscribe = subscribe
        self.admin = admin
        self.publishData = publishData
    }

    /// Whether the server relays this participant's data channel messages:
    /// `publishData`, or for tokens without it (older ones) `publish`.
    package var mayPublishData: Bool { publishData ?? publish }
}

/// Makes identifiers. Injected so tests get predictable ones; the server
/// uses random ones (ids are visible to other participants and must not be
/// guessable: a call is addressed by participant id).
package protocol IdentifierSource {
    mutating func next(prefix: String) -> String
}

/// Sequential identifiers, for tests and reproducible simulations.
package struct SequentialIdentifiers: IdentifierSource {
    private var counter = 0
    package init() {}
    package mutating func next(prefix: String) -> String {
        counter += 1
        return prefix + String(counter)
    }
}
