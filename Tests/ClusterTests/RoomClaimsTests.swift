import Cluster
import Testing

/// Which claimed homes a node releases and which local rooms are stale,
/// from what it claimed, what it hosts and what Redis answered.
@Suite struct RoomClaimsTests {
    let me = NodeID(rawValue: "me")
    let other = NodeID(rawValue: "other")

    func home(_ node: NodeID, _ epoch: Int64) -> StoredRoomHome { .home(node: node, epoch: epoch) }

    @Test func aClaimedRoomIsReleasedOnlyAfterTwoRefreshesWithoutIt() {
        var claims = RoomClaims(owner: me)
        claims.remember("a", epoch: 5)
        claims.remember("b", epoch: 6)
        // The join that placed "a" has not created it yet: one absence.
        #expect(claims.releasesDue(localRooms: ["b"], listedAt: claims.generation).isEmpty)
        // Created by the next refresh: the count starts over.
        #expect(claims.releasesDue(localRooms: ["a", "b"], listedAt: claims.generation).isEmpty)
        #expect(claims.releasesDue(localRooms: ["b"], listedAt: claims.generation).isEmpty)
        let due = claims.releasesDue(localRooms: ["b"], listedAt: claims.generation)
        #expect(due.map(\.room) == ["a"] && due.map(\.epoch) == [5])
        // Until the release is done it stays, and is due again (a failed
        // release is retried at the next refresh).
        #expect(claims.releasesDue(localRooms: ["b"], listedAt: claims.generation).map(\.room) == ["a"])
        for r in due { claims.finished(r) }
        #expect(claims.claims.keys.sorted() == ["b"])
        #expect(claims.releasesDue(localRooms: [], listedAt: claims.generation).isEmpty)
        #expect(claims.releasesDue(localRooms: [], listedAt: claims.generation).map(\.room) == ["b"])
    }

    /// A claim made while the server listed its rooms may be missing from
    /// that list: that listing does not count against it.
    @Test func aClaimMadeAfterTheListingIsNotCountedAbsent() {
        var claims = RoomClaims(owner: me)
        let listedAt = claims.generation
        claims.remember("a", epoch: 5)
        #expect(claims.releasesDue(localRooms: [], listedAt: listedAt).isEmpty)
        #expect(claims.claims["a"]?.absences == 0)
        #expect(claims.releasesDue(localRooms: [], listedAt: claims.generation).isEmpty)
        #expect(claims.releasesDue(localRooms: [], listedAt: claims.generation).map(\.room) == ["a"])
    }

    @Test func aReleaseDecidedBeforeAJoinClaimedTheRoomAgainKeepsTheNewClaim() {
        var claims = RoomClaims(owner: me)
        claims.remember("a", epoch: 5)
        _ = claims.releasesDue(localRooms: [], listedAt: claims.generation)
        let due = claims.releasesDue(localRooms: [], listedAt: claims.generation)
        #expect(due.count == 1)
        // A join finds the home here again while the release is in flight.
        claims.remember("a", epoch: 5)
        for r in due { claims.finished(r) }
        #expect(claims.claims["a"]?.epoch == 5)
        #expect(claims.claims["a"]?.absences == 0)
    }

    @Test func localRoomsAreCheckedAgainstTheirHomes() {
        var claims = RoomClaims(owner: me)
        claims.remember("ours", epoch: 5)
        claims.remember("lost", epoch: 6)
        claims.remember("taken", epoch: 7)
        claims.remember("replaced", epoch: 8)
        let table: [(String, StoredRoomHome, RoomClaims.Check)] = [
            ("ours", home(me, 5), .current),
            // Redis restarted empty, or the home was released: claim again.
            ("lost", .missing, .claim),
            ("taken", home(other, 11), .drop(RoomHome(node: other, epoch: 11, placedNow: false))),
            // Placed here again at a newer epoch without this copy.
            ("replaced", home(me, 12), .drop(RoomHome(node: me, epoch: 12, placedNow: false))),
            // Redis restarted empty counts epochs from 1 again: another
            // epoch, not only a greater one, is another placement.
            ("ours", home(me, 1), .drop(RoomHome(node: me, epoch: 1, placedNow: false))),
            // Hosted here with no claim: a home naming us is taken as ours,
            // one naming another node is stale.
            ("unclaimed", home(me, 13), .current),
            ("elsewhere", home(other, 14), .drop(RoomHome(node: other, epoch: 14, placedNow: false))),
            ("garbage", .unreadable, .drop(nil)),
        ]
        let readAt = claims.generation
        for (room, stored, expected) in table {
            #expect(claims.check(room, stored: stored, readAt: readAt) == expected, "\(room)")
        }
        #expect(claims.claims.keys.sorted() == ["lost", "unclaimed"])
        #expect(claims.claims["unclaimed"]?.epoch == 13)
    }

    @Test func aMissingHomeClaimedAgainIsOursOrStale() {
        var claims = RoomClaims(owner: me)
        claims.remember("a", epoch: 5)
        #expect(claims.check("a", stored: .missing, readAt: claims.generation) == .claim)
        #expect(claims.claimed("a", home: RoomHome(node: me, epoch: 20, placedNow: true)) == .current)
        #expect(claims.claims["a"]?.epoch == 20)
        #expect(claims.check("b", stored: .missing, readAt: claims.generation) == .claim)
        let theirs = RoomHome(node: other, epoch: 21, placedNow: false)
        #expect(claims.claimed("b", home: theirs) == .drop(theirs))
        #expect(claims.claims["b"] == nil)
    }

    @Test func aReadSentBeforeAJoinClaimedTheRoomDecidesNothing() {
        var claims = RoomClaims(owner: me)
        claims.remember("a", epoch: 5)
        let readAt = claims.generation
        // The read answers another node; meanwhile a join placed the room
        // here anew (its old home died, Redis restarted empty...).
        claims.remember("a", epoch: 2)
        #expect(claims.check("a", stored: home(other, 4), readAt: readAt) == .wait)
        #expect(claims.check("a", stored: .missing, readAt: readAt) == .wait)
        #expect(claims.claims["a"]?.epoch == 2)
        #expect(claims.check("a", stored: home(me, 2), readAt: claims.generation) == .current)
    }

    @Test func aStaleRoomIsReportedOncePerHomeUntilItIsGone() {
        var claims = RoomClaims(owner: me)
        claims.remember("a", epoch: 5)
        let first = RoomHome(node: other, epoch: 6, placedNow: false)
        #expect(claims.check("a", stored: home(other, 6), readAt: claims.generation) == .drop(first))
        // The server has not dropped it by the next refresh: not again, and
        // neither claimed nor taken back while it is being dropped.
        _ = claims.releasesDue(localRooms: ["a"], listedAt: claims.generation)
        #expect(claims.check("a", stored: home(other, 6), readAt: claims.generation) == .wait)
        #expect(claims.check("a", stored: .missing, readAt: claims.generation) == .wait)
        #expect(claims.check("a", stored: home(me, 7), readAt: claims.generation) == .wait)
        // Its home moved again: reported with the new home.
        #expect(
            claims.check("a", stored: home(other, 8), readAt: claims.generation)
                == .drop(RoomHome(node: other, epoch: 8, placedNow: false)))
        // Dropped now; a later copy of the room is checked afresh.
        _ = claims.releasesDue(localRooms: [], listedAt: claims.generation)
        #expect(claims.reportedStale.isEmpty)
        #expect(claims.check("a", stored: .missing, readAt: claims.generation) == .claim)
    }

    @Test func aJoinPlacingTheRoomHereAgainClearsItsStaleReport() {
        var claims = RoomClaims(owner: me)
        #expect(
            claims.check("a", stored: home(other, 6), readAt: claims.generation)
                == .drop(RoomHome(node: other, epoch: 6, placedNow: false)))
        claims.remember("a", epoch: 9)
        #expect(claims.reportedStale.isEmpty)
        #expect(claims.check("a", stored: home(me, 9), readAt: claims.generation) == .current)
    }

    /// A part of a room homed elsewhere (the cascade) is not stale: it
    /// follows the home's epoch (the home died and the room was placed
    /// again) instead of being dropped, claims the room when its home
    /// released it, and is forgotten with the room, with nothing released.
    @Test func aShardFollowsItsHomeAndClaimsTheRoomWhenTheHomeLetsGo() {
        var claims = RoomClaims(owner: me)
        claims.rememberShard("a", epoch: 5)
        #expect(claims.epoch(of: "a") == 5)
        #expect(claims.check("a", stored: home(other, 5), readAt: claims.generation) == .current)
        #expect(claims.check("a", stored: home(other, 9), readAt: claims.generation) == .current)
        #expect(claims.epoch(of: "a") == 9)
        #expect(claims.check("a", stored: .missing, readAt: claims.generation) == .claim)
        // Another part claimed it first: still a part, at the new epoch.
        #expect(claims.claimed("a", home: RoomHome(node: other, epoch: 10, placedNow: true)) == .current)
        #expect(claims.epoch(of: "a") == 10 && claims.claims["a"] == nil)
        // This one claimed it: now its home.
        #expect(claims.claimed("a", home: RoomHome(node: me, epoch: 11, placedNow: true)) == .current)
        #expect(claims.claims["a"]?.epoch == 11 && claims.shards["a"] == nil)

        claims.rememberShard("b", epoch: 3)
        #expect(claims.releasesDue(localRooms: ["a"], listedAt: claims.generation).isEmpty)
        #expect(claims.shards["b"] == nil && claims.epoch(of: "b") == nil)
    }

    /// A room homed here stays a claim: a later `rememberShard` (a proxied
    /// join) does not turn it into a part.
    @Test func aHomeIsNotTurnedIntoAShard() {
        var claims = RoomClaims(owner: me)
        claims.remember("a", epoch: 4)
        claims.rememberShard("a", epoch: 4)
        #expect(claims.shards["a"] == nil && claims.claims["a"]?.epoch == 4)
    }
}
