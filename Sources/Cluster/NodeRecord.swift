import FoundationEssentials

/// A node's identity: its configured name and a boot nonce, so a node that
/// restarts is a new node (issue #15): nothing the old one held is claimed
/// by the new one, and its record expires on its own.
package struct NodeID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) { self.rawValue = rawValue }

    /// `name` and a fresh nonce: `name~nonce` (16 hex digits).
    package init(name: String, nonce: UInt64) {
        let hex = String(nonce, radix: 16)
        rawValue = "\(name)~\(String(repeating: "0", count: max(0, 16 - hex.count)))\(hex)"
    }

    package var description: String { rawValue }
    package static func < (a: NodeID, b: NodeID) -> Bool { a.rawValue < b.rawValue }

    /// A node id as `init(name:nonce:)` writes it (`name~` and 16 hex
    /// digits), parsed from untrusted text (a session id in a URL); nil for
    /// anything else, so such text never names a Redis key.
    package init?(validating text: String) {
        guard let tilde = text.lastIndex(of: "~"), Self.isValidName(String(text[..<tilde])) else { return nil }
        let nonce = text[text.index(after: tilde)...]
        guard nonce.utf8.count == 16, nonce.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        else { return nil }
        rawValue = text
    }

    /// Characters a node name may use: they appear in Redis keys and URLs.
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F
                    || c == 0x2E
            }
    }
}

/// What a node may take on; nil is unlimited.
package struct NodeLimits: Equatable, Codable, Sendable {
    package var maxRooms: Int?
    package var maxParticipants: Int?
    /// Participants of one room this node holds before new ones go to
    /// another node as a shard (the cascade).
    package var roomNodeCapacity: Int?

    package init(maxRooms: Int? = nil, maxParticipants: Int? = nil, roomNodeCapacity: Int? = nil) {
        self.maxRooms = maxRooms
        self.maxParticipants = maxParticipants
        self.roomNodeCapacity = roomNodeCapacity
    }
}

/// A node's load as it last wrote it.
package struct NodeLoad: Equatable, Codable, Sendable {
    package var rooms: Int
    package var participants: Int
    package var forwardedPacketsPerSecond: Int
    /// Share of all cores in use by the process, 0...1.
    package var cpu: Double

    package init(rooms: Int = 0, participants: Int = 0, forwardedPacketsPerSecond: Int = 0, cpu: Double = 0) {
        self.rooms = rooms
        self.participants = participants
        self.forwardedPacketsPerSecond = forwardedPacketsPerSecond
        self.cpu = cpu
    }
}

/// The record each node rewrites every `ClusterTiming.refreshInterval`
/// under a key that expires after `recordLifetime`: a node whose record is
/// gone is dead (read, never inferred from keyspace notifications, whose
/// delivery is not guaranteed).
package struct NodeRecord: Equatable, Codable, Sendable {
    package var id: NodeID
    /// Where clients and other nodes reach its HTTP API (`https://host:port`).
    package var httpAddress: String
    /// Where other nodes reach its relay transport (`host:port`).
    package var relayAddress: String
    package var region: String?
    package var limits: NodeLimits
    package var load: NodeLoad
    /// A draining node takes no new rooms (placement skips it).
    package var draining: Bool
    /// What another node needs to open a relay transport to this one
    /// (nil: this node keeps no relays).
    package var relay: NodeRelayParameters?

    package init(
        id: NodeID, httpAddress: String, relayAddress: String, region: String? = nil, limits: NodeLimits = NodeLimits(),
        load: NodeLoad = NodeLoad(), draining: Bool = false, relay: NodeRelayParameters? = nil
    ) {
        self.id = id
        self.httpAddress = httpAddress
        self.relayAddress = relayAddress
        self.relay = relay
        self.region = region
        self.limits = limits
        self.load = load
        self.draining = draining
    }

    /// At most this many bytes are read back as a record.
    package static let maxEncodedSize = 4096

    package func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? Array(encoder.encode(self))) ?? []
    }

    /// Nil for bytes that are not a record (another version's, or damaged):
    /// such a node is treated as absent, never as a crash.
    package init?(decoding bytes: [UInt8]) {
        guard bytes.count <= Self.maxEncodedSize, let r = try? JSONDecoder().decode(NodeRecord.self, from: Data(bytes))
        else { return nil }
        self = r
    }

    /// Whether placement may give this node a new room.
    package var acceptsRooms: Bool {
        guard !draining else { return false }
        if let max = limits.maxRooms, load.rooms >= max { return false }
        if let max = limits.maxParticipants, load.participants >= max { return false }
        return true
    }

    /// Whether placement may give this node a new participant of a room it
    /// already serves (the cascade, `ShardPlacement`): not draining, under
    /// its participant limit. The room limit does not apply: no new room.
    package var acceptsParticipants: Bool {
        guard !draining else { return false }
        if let max = limits.maxParticipants, load.participants >= max { return false }
        return true
    }
}
