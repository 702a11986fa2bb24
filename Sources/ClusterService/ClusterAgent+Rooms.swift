import Cluster

/// What the cluster agent needs from the server's rooms, set once the rooms
/// exist (`ClusterAgent.setRoomHooks`). Both are called on the agent's
/// thread, never under one of the agent's locks.
package struct ClusterRoomHooks: Sendable {
    /// The names of the rooms this node hosts now (called on the agent's
    /// thread, once per refresh).
    package var localRooms: @Sendable () -> [String]
    /// `room`'s home in Redis is now another node, or a newer epoch: this
    /// node's copy is stale and must be dropped (its participants told to
    /// reconnect elsewhere). Called on the agent's thread, once per room
    /// and home: a room still local at the next refresh is not reported
    /// again unless its home changed. `home` is nil when the room's key in
    /// Redis cannot be read as a home (not written by this code).
    package var dropStale: @Sendable (_ room: String, _ home: RoomHome?) -> Void
    /// The live nodes this refresh read (this node included), on the
    /// agent's thread: what the relay transports to other nodes follow.
    package var nodesRead: @Sendable (_ nodes: [NodeRecord]) -> Void

    package init(
        localRooms: @escaping @Sendable () -> [String],
        dropStale: @escaping @Sendable (_ room: String, _ home: RoomHome?) -> Void,
        nodesRead: @escaping @Sendable (_ nodes: [NodeRecord]) -> Void = { _ in }
    ) {
        self.localRooms = localRooms
        self.dropStale = dropStale
        self.nodesRead = nodesRead
    }
}

/// The resync of this node's room homes, once per successful refresh
/// (`RoomClaims` decides, this performs): release the homes of rooms that
/// ended, then read the home of every local room, claim again those Redis
/// lost, and report those homed elsewhere. After an outage the first
/// refresh that succeeds runs this same step: the node's homes are put
/// back from what it hosts (Redis restarted empty) or found taken.
extension ClusterAgent {
    /// Sets the hooks (a server makes its rooms after the agent, so they
    /// come after `init`). Without hooks the agent does not touch room
    /// homes: it cannot tell which rooms ended.
    package func setRoomHooks(_ hooks: ClusterRoomHooks) {
        roomHooks.withLock { $0 = hooks }
    }

    /// Rooms homed on this node now, as this node's claims.
    package var claimedRoomCount: Int { claims.withLock { $0.claims.count } }
    /// Homes released in Redis because their room ended here.
    package var releaseCount: Int { releases.load(ordering: .relaxed) }
    /// Local rooms reported stale (`ClusterRoomHooks.dropStale`).
    package var staleDropCount: Int { staleDrops.load(ordering: .relaxed) }

    /// One resync step (on the agent's thread). A Redis error ends the step
    /// and is counted; the next refresh starts it over, and a claim whose
    /// release failed is released then.
    func resyncRooms(_ registry: ClusterRegistry) {
        guard let hooks = roomHooks.withLock({ $0 }) else { return }
        let listedAt = claims.withLock { $0.generation }
        let local = Set(hooks.localRooms())
        let due = claims.withLock { $0.releasesDue(localRooms: local, listedAt: listedAt) }
        do throws(ClusterError) {
            if !due.isEmpty {
                let released = try registry.release(due, node: record.id)
                claims.withLock { for r in due { $0.finished(r) } }
                releases.add(released.count { $0 }, ordering: .relaxed)
            }
            let rooms = local.sorted()
            let readAt = claims.withLock { $0.generation }
            let stored = try registry.storedHomes(rooms)
            var missing: [String] = []
            var drops: [(String, RoomHome?)] = []
            claims.withLock { claims in
                for (room, home) in zip(rooms, stored) {
                    switch claims.check(room, stored: home, readAt: readAt) {
                    case .claim: missing.append(room)
                    case .drop(let home): drops.append((room, home))
                    case .current, .wait: break
                    }
                }
            }
            report(drops, to: hooks)
            guard !missing.isEmpty else { return }
            let results = try registry.claimRooms(missing, candidate: record.id)
            drops = []
            var refused = 0
            claims.withLock { claims in
                for (room, result) in zip(missing, results) {
                    switch result {
                    case .success(let home):
                        if case .drop(let home) = claims.claimed(room, home: home) { drops.append((room, home)) }
                    // Our own record expired between register and here: the next refresh claims again.
                    case .failure(.candidateNotLive): break
                    case .failure(.unexpectedReply): refused += 1
                    }
                }
            }
            if refused > 0 { redisErrors.add(refused, ordering: .relaxed) }
            report(drops, to: hooks)
        } catch {
            redisErrors.add(1, ordering: .relaxed)
        }
    }

    private func report(_ drops: [(String, RoomHome?)], to hooks: ClusterRoomHooks) {
        guard !drops.isEmpty else { return }
        staleDrops.add(drops.count, ordering: .relaxed)
        for (room, home) in drops { hooks.dropStale(room, home) }
    }
}
