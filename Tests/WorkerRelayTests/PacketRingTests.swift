import Testing
import WorkerRelay

@Suite struct PacketRingTests {
    /// Writes `value` as 4 bytes into a slot.
    static func push(_ ring: PacketRing, _ value: UInt32, bytes: Int = 4) -> Bool {
        ring.push { slot in
            slot.storeBytes(of: value, as: UInt32.self)
            return bytes
        }
    }

    static func pop(_ ring: PacketRing) -> UInt32? {
        ring.pop { $0.count >= 4 ? $0.loadUnaligned(as: UInt32.self) : UInt32.max }
    }

    @Test func capacityRoundsUpToAPowerOfTwo() {
        #expect(PacketRing(capacity: 5, slotSize: 16).capacity == 8)
        #expect(PacketRing(capacity: 1, slotSize: 16).capacity == 2)
        #expect(PacketRing(capacity: 64, slotSize: 16).capacity == 64)
    }

    @Test func wrapsAroundManyTimesInOrder() {
        let ring = PacketRing(capacity: 4, slotSize: 32)
        var next: UInt32 = 0
        var expected: UInt32 = 0
        // 3 in, 2 out each round: the indices pass the capacity many times
        // with the ring partly full.
        for _ in 0..<100 {
            for _ in 0..<3 where ring.count < 4 {
                #expect(Self.push(ring, next))
                next += 1
            }
            for _ in 0..<2 {
                #expect(Self.pop(ring) == expected)
                expected += 1
            }
        }
        while let v = Self.pop(ring) {
            #expect(v == expected)
            expected += 1
        }
        #expect(expected == next)
        #expect(ring.count == 0)
    }

    @Test func aFullRingRefusesWithoutCallingTheWriter() {
        let ring = PacketRing(capacity: 4, slotSize: 8)
        for i in 0..<4 { #expect(Self.push(ring, UInt32(i))) }
        var called = false
        #expect(
            !ring.push { _ in
                called = true; return 1
            })
        #expect(!called)
        #expect(ring.count == 4)
        #expect(Self.pop(ring) == 0)
        #expect(Self.push(ring, 4))
        #expect((1...4).map { _ in Self.pop(ring) } == [1, 2, 3, 4])
        #expect(Self.pop(ring) == nil)
    }

    @Test func theSlotCarriesTheUsedLengthAndAnAbandonedWriteLeavesNothing() {
        let ring = PacketRing(capacity: 4, slotSize: 100)
        #expect(ring.push { $0.count == 100 ? 100 : 0 })
        #expect(!ring.push { _ in nil })
        #expect(!ring.push { _ in 101 }, "a length past the slot is refused")
        #expect(ring.push { _ in 0 })
        #expect(ring.pop { $0.count } == 100)
        #expect(ring.pop { $0.count } == 0)
        #expect(ring.pop { $0.count } == nil)
    }

    @Test func drainIsBoundedAndKeepsTheRest() {
        let ring = PacketRing(capacity: 16, slotSize: 8)
        for i in 0..<10 { #expect(Self.push(ring, UInt32(i))) }
        var seen: [UInt32] = []
        #expect(ring.drain(limit: 4) { seen.append($0.loadUnaligned(as: UInt32.self)) } == 4)
        #expect(seen == [0, 1, 2, 3])
        #expect(ring.count == 6)
        #expect(ring.drain(limit: 100) { seen.append($0.loadUnaligned(as: UInt32.self)) } == 6)
        #expect(seen == Array(0..<10))
        #expect(ring.drain(limit: 100) { _ in } == 0)
        #expect(ring.drain(limit: 0) { _ in } == 0)
    }
}
