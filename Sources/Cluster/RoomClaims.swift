/// The room homes a node claimed for itself, and the decisions that keep
/// them true in Redis (issue #15): release the homes of rooms that ended,
/// claim again the homes Redis lost, and drop the local copy of a room
/// whose home is now elsewhere. A pure value: the agent feeds it what it
/// read and performs what it answers, once per refresh.
///
/// When a room counts as ended: absent from the node's local rooms at two
/// successive refreshes, both listed after the claim
/// (`absencesBeforeRelease`).
/// A join places its room before the room exists locally; successful
/// refreshes are at least a refresh interval apart (2 s), so a join has at
/// least that long to create its room before its home is released. Counting
/// refreshes instead of comparing the claim's age needs no clock here, and
/// a refresh that fails counts nothing. A join that finds the room's home
/// here again (`remember`) starts the count over.
package struct RoomClaims: Equatable, Sendable {
    /// The node whose claims these are.
    package let owner: NodeID

    package struct Claim: Equatable, Sendable {
        package var epoch: Int64
        /// Successive refreshes at which the room was not local, since the
        /// claim.
        package var absences: Int
        /// The `generation` of the `remember` that made the claim, so a
        /// release or a read from before a join claimed the room again does
        /// not undo the newer claim.
        package var generation: UInt64
    }

    package private(set) var claims: [String: Claim] = [:]
    /// Grows with every `remember`: a read sent at generation g predates
    /// every claim of a later generation.
    package private(set) var generation: UInt64 = 0
    /// Rooms reported stale and the home they were reported with: a room
    /// the server has not dropped yet is reported once per home, not at
    /// every refresh. Emptied of a room once it is no longer local.
    package private(set) var reportedStale: [String: RoomHome?] = [:]

    /// Rooms this node serves a part of while another node is their home
    /// (the cascade: a shard), with the epoch last seen. A shard's home
    /// being elsewhere is not staleness; a shard adopts a newer epoch (the
    /// home died and the room was placed again) instead of dropping its
    /// part, so the room's other nodes keep forwarding among themselves.
    package private(set) var shards: [String: Int64] = [:]

    package static let absencesBeforeRelease = 2

    package init(owner: NodeID) { self.owner = owner }

    /// `room`'s home is this node at `epoch` (a placement returned it).
    package mutating func remember(_ room: String, epoch: Int64) {
        generation += 1
        shards[room] = nil
        claims[room] = Claim(epoch: epoch, absences: 0, generation: generation)
        reportedStale[room] = nil
    }

    /// This node serves a part of `room`, homed on another node at `epoch`
    /// (a join placed here as a shard). A home claimed here wins.
    package mutating func rememberShard(_ room: String, epoch: Int64) {
        guard claims[room] == nil else { return }
        generation += 1
        shards[room] = epoch
        reportedStale[room] = nil
    }

    /// The epoch this node holds `room` at, as its home or as a shard.
    package func epoch(of room: String) -> Int64? { claims[room]?.epoch ?? shards[room] }

    /// A release the agent must perform: `RoomRelease` of this home.
    package struct Release: Equatable, Sendable {
        package var room: String
        package var epoch: Int64
        package var generation: UInt64

        package init(room: String, epoch: Int64, generation: UInt64) {
            self.room = room
            self.epoch = epoch
            self.generation = generation
        }
    }

    /// The first step of a refresh, with the rooms the node hosts now, as
    /// listed from `listedAt` (`generation` just before the listing; a claim
    /// made after it may not be in that list yet, and is not counted):
    /// counts absences and answers the homes to release, by room name. A
    /// claim stays until `finished` (a release that failed is retried at
    /// the next refresh).
    package mutating func releasesDue(localRooms: Set<String>, listedAt: UInt64) -> [Release] {
        var due: [Release] = []
        for (room, claim) in claims where claim.generation <= listedAt {
            if localRooms.contains(room) {
                claims[room]?.absences = 0
                continue
            }
            let absences = claim.absences + 1
            claims[room]?.absences = absences
            if absences >= Self.absencesBeforeRelease {
                due.append(Release(room: room, epoch: claim.epoch, generation: claim.generation))
            }
        }
        for room in reportedStale.keys where !localRooms.contains(room) { reportedStale[room] = nil }
        // A shard has no home to release: it is forgotten with its room.
        for room in shards.keys where !localRooms.contains(room) { shards[room] = nil }
        return due.sorted { $0.room < $1.room }
    }

    /// `RoomRelease` answered for `release` (deleted, or the home was not
    /// ours any more): the claim is forgotten unless a join claimed the room
    /// again meanwhile.
    package mutating func finished(_ release: Release) {
        if claims[release.room]?.generation == release.generation { claims[release.room] = nil }
    }

    /// What to do about a local room.
    package enum Check: Equatable, Sendable {
        /// Homed here at our epoch: nothing to do.
        case current
        /// No home in Redis: claim it for this node (`RoomClaim`, this node
        /// the candidate), then `claimed`.
        case claim
        /// Homed elsewhere or at another epoch: the local copy is stale;
        /// the server drops it (nil: the home cannot be read). The claim is
        /// forgotten already.
        case drop(RoomHome?)
        /// Nothing this time: the read predates a newer claim of ours, or
        /// the room was reported stale with this home already.
        case wait
    }

    /// The second step, for each local room, with its home as read by a
    /// read sent at `readAt` (`generation` then).
    ///
    /// A claim made after the read was sent (a join placed the room here
    /// meanwhile) is newer than what was read: the room waits for the next
    /// refresh. Epochs are compared for equality only: they grow while
    /// Redis keeps its data, but a Redis restarted empty counts them from 1
    /// again. A home naming this node at another epoch than ours is stale
    /// too: the room was placed again without this copy (Redis lost the
    /// hash and another node placed it here), so other nodes hold an epoch
    /// this copy never had. A home naming this node that we hold no claim
    /// for (forgotten after a release raced a join) is taken as ours. A
    /// room reported stale is being dropped: neither claimed nor taken
    /// again.
    package mutating func check(_ room: String, stored: StoredRoomHome, readAt: UInt64) -> Check {
        let claim = claims[room]
        if let claim, claim.generation > readAt { return .wait }
        let dropping = reportedStale[room] != nil
        if shards[room] != nil {
            switch stored {
            // The home released the room (its last local participant
            // left) or Redis lost it: the part here claims it.
            case .missing: return .claim
            case .home(let node, let epoch) where node != owner:
                shards[room] = epoch
                return .current
            case .home, .unreadable: break
            }
        }
        switch stored {
        case .missing:
            return dropping ? .wait : .claim
        case .unreadable:
            return stale(room, nil)
        case .home(let node, let epoch):
            if node == owner, claim == nil || claim?.epoch == epoch {
                if dropping { return .wait }
                if claim == nil { remember(room, epoch: epoch) }
                return .current
            }
            return stale(room, RoomHome(node: node, epoch: epoch, placedNow: false))
        }
    }

    /// `RoomClaim` answered `home` for a local room that had none.
    package mutating func claimed(_ room: String, home: RoomHome) -> Check {
        if home.node == owner {
            shards[room] = nil
            remember(room, epoch: home.epoch)
            return .current
        }
        if shards[room] != nil {
            shards[room] = home.epoch
            return .current
        }
        return stale(room, home)
    }

    private mutating func stale(_ room: String, _ home: RoomHome?) -> Check {
        claims[room] = nil
        if let reported = reportedStale[room], reported == home { return .wait }
        reportedStale[room] = .some(home)
        return .drop(home)
    }
}
