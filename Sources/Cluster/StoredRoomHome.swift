/// A room's home as read back from Redis (`HMGET <room key> node epoch`), to
/// check that a room this node hosts is still homed here.
package enum StoredRoomHome: Equatable, Sendable {
    /// No hash: the room was released, or Redis restarted empty.
    case missing
    case home(node: NodeID, epoch: Int64)
    /// The key holds something `RoomClaim` did not write (not a hash, a
    /// node without an epoch, an epoch that is not a number).
    case unreadable

    package static func command(room: String, keys: ClusterKeys) -> [String] {
        ["HMGET", keys.room(room), "node", "epoch"]
    }

    /// Redis's answer to `command`. An error reply other than `WRONGTYPE` (the
    /// key is not a hash) is Redis failing, not the key's content: thrown.
    package init(reply: RedisValue) throws(StoredRoomHomeError) {
        switch reply {
        case .error(let text):
            guard text.hasPrefix("WRONGTYPE") else { throw .refused(text) }
            self = .unreadable
        case .array(let items) where items.count == 2:
            switch (items[0], items[1]) {
            case (.null, .null): self = .missing
            case (.bulk, .bulk):
                if let node = items[0].text, !node.isEmpty, let digits = items[1].text, let epoch = Int64(digits) {
                    self = .home(node: NodeID(rawValue: node), epoch: epoch)
                } else {
                    self = .unreadable
                }
            default: self = .unreadable
            }
        default: throw .unexpectedReply("\(reply)")
        }
    }
}

/// Why a read of a room's home gave no answer about the room.
package enum StoredRoomHomeError: Error, Equatable, Sendable {
    /// Redis answered with an error (loading, out of memory, ...).
    case refused(String)
    /// Not the two-element array `HMGET` answers.
    case unexpectedReply(String)
}
