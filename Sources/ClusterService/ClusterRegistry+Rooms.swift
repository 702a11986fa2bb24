import Cluster

/// The calls that keep a node's room homes true (`RoomClaims` decides which):
/// each a series of pipelines of at most `roomBatch` commands, so a node
/// with many rooms neither builds one huge request nor waits on one huge
/// reply (each pipeline has the whole command timeout).
extension ClusterRegistry {
    package static let roomBatch = 500
    package typealias ClaimOutcome = Result<RoomHome, RoomClaimError>

    /// The homes of `rooms`, in order (`HMGET node epoch` each).
    package func storedHomes(_ rooms: [String]) throws(ClusterError) -> [StoredRoomHome] {
        let replies = try runBatched(rooms.map { StoredRoomHome.command(room: $0, keys: keys) })
        var homes: [StoredRoomHome] = []
        homes.reserveCapacity(replies.count)
        for reply in replies {
            do { homes.append(try StoredRoomHome(reply: reply)) } catch {
                switch error {
                case .refused(let why), .unexpectedReply(let why): throw .refused(why)
                }
            }
        }
        return homes
    }

    /// Deletes each room's home that still names `node` at the release's
    /// epoch (`RoomRelease`); true where it did.
    package func release(_ releases: [RoomClaims.Release], node: NodeID) throws(ClusterError) -> [Bool] {
        let replies = try runBatched(
            releases.map { RoomRelease.command(room: $0.room, node: node, epoch: $0.epoch, keys: keys) })
        var released: [Bool] = []
        released.reserveCapacity(replies.count)
        for reply in replies {
            do { released.append(try RoomRelease.released(from: reply)) } catch {
                switch error {
                case .unexpectedReply(let why): throw .refused(why)
                }
            }
        }
        return released
    }

    /// `claimRoom` for each room, pipelined: each room's home, or why the
    /// claim gave none.
    package func claimRooms(_ rooms: [String], candidate: NodeID) throws(ClusterError) -> [ClaimOutcome] {
        try runBatched(rooms.map { RoomClaim.command(room: $0, candidate: candidate, keys: keys) }).map { reply in
            Result { () throws(RoomClaimError) -> RoomHome in try RoomClaim.home(from: reply) }
        }
    }

    private func runBatched(_ commands: [[String]]) throws(ClusterError) -> [RedisValue] {
        var replies: [RedisValue] = []
        replies.reserveCapacity(commands.count)
        var start = 0
        while start < commands.count {
            let end = min(start + Self.roomBatch, commands.count)
            replies += try run(Array(commands[start..<end]))
            start = end
        }
        return replies
    }
}
