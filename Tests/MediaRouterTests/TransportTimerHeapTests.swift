import MediaRouter
import SFUTesting
import Testing
import Wire

struct TransportTimerHeapTests {
    private static func entry(_ ms: Int64, _ id: UInt64, generation: UInt64 = 0) -> TransportTimerHeap.Entry {
        TransportTimerHeap.Entry(deadline: Instant(nanoseconds: ms * 1_000_000), id: TransportID(id), generation: generation)
    }

    @Test func popsInDeadlineOrderWhateverThePushOrder() {
        var generator = SeededGenerator(state: 7)
        var heap = TransportTimerHeap()
        var pushed: [Int64] = []
        for id in 0..<500 {
            let ms = Int64(generator.next() % 10_000)
            pushed.append(ms)
            heap.push(Self.entry(ms, UInt64(id)))
        }
        var popped: [Int64] = []
        while let e = heap.popMinimum() { popped.append(e.deadline.nanoseconds / 1_000_000) }
        #expect(popped == pushed.sorted())
        #expect(heap.minimum == nil)
    }

    @Test func rebuildKeepsOnlyTheGivenEntriesInOrder() {
        var heap = TransportTimerHeap()
        for id in 0..<100 { heap.push(Self.entry(Int64(100 - id), UInt64(id))) }
        #expect(heap.needsCompaction(live: 10))
        #expect(!heap.needsCompaction(live: 50))
        heap.rebuild([Self.entry(30, 1), Self.entry(10, 2), Self.entry(20, 3)])
        #expect(heap.count == 3)
        #expect(heap.popMinimum() == Self.entry(10, 2))
        #expect(heap.popMinimum() == Self.entry(20, 3))
        #expect(heap.popMinimum() == Self.entry(30, 1))
    }
}
