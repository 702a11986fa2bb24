import RoomProtocol
import Rooms
import Testing
import Wire

@testable import SignalingServer

/// The parts read for WHEP offers on a node without a part of the room
/// are kept briefly and bounded (a read nothing uses costs a slot until it
/// ages out, never more than `capacity` of them).
@Suite struct PreparedRemotePartsTests {
    let start = Instant(nanoseconds: 1_000_000_000)
    let parts: [String: [RemoteParticipant]] = ["n1": [RemoteParticipant(id: ParticipantID("PA_x"), identity: "x", tracks: [])]]

    @Test func aReadStandsForItsLifetimeOnly() {
        var prepared = PreparedRemoteParts()
        prepared.store(parts, of: "r", now: start)
        #expect(prepared.parts(of: "r", now: start + .seconds(4)) == parts)
        #expect(prepared.parts(of: "r", now: start + PreparedRemoteParts.lifetime) == nil)
        #expect(prepared.parts(of: "other", now: start) == nil)
    }

    @Test func atCapacityTheOldestGoesAndExpiredOnesAreDropped() {
        var prepared = PreparedRemoteParts()
        for i in 0..<PreparedRemoteParts.capacity {
            prepared.store(parts, of: "r\(i)", now: start + .milliseconds(i))
        }
        #expect(prepared.count == PreparedRemoteParts.capacity)
        prepared.store(parts, of: "new", now: start + .seconds(1))
        #expect(prepared.count == PreparedRemoteParts.capacity)
        #expect(prepared.parts(of: "r0", now: start + .seconds(1)) == nil)
        #expect(prepared.parts(of: "r1", now: start + .seconds(1)) != nil)
        #expect(prepared.parts(of: "new", now: start + .seconds(1)) != nil)
        // Past the lifetime every old entry goes at the next store.
        prepared.store(parts, of: "late", now: start + .seconds(10))
        #expect(prepared.count == 1)
    }
}
