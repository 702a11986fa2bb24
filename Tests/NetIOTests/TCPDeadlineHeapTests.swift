import Testing
import Wire

@testable import NetIO

@Suite struct TCPDeadlineHeapTests {
    private func at(_ ms: Int64, _ id: UInt64) -> TCPDeadlineHeap.Entry {
        .init(deadline: Instant(nanoseconds: ms * 1_000_000), id: id)
    }

    private func drain(_ heap: inout TCPDeadlineHeap) -> [TCPDeadlineHeap.Entry] {
        var out: [TCPDeadlineHeap.Entry] = []
        while let e = heap.pop() { out.append(e) }
        return out
    }

    @Test func popsEarliestFirstAndTiesInIDOrder() {
        var heap = TCPDeadlineHeap()
        for e in [at(50, 1), at(10, 7), at(30, 2), at(10, 3), at(90, 4), at(20, 5), at(10, 6)] { heap.push(e) }
        #expect(heap.first == at(10, 3))
        #expect(drain(&heap) == [at(10, 3), at(10, 6), at(10, 7), at(20, 5), at(30, 2), at(50, 1), at(90, 4)])
        #expect(heap.pop() == nil)
    }

    @Test func rebuildKeepsOnlyTheGivenEntriesInOrder() {
        var heap = TCPDeadlineHeap()
        for i in 0..<100 { heap.push(at(Int64(100 - i), UInt64(i))) }
        heap.rebuild(from: [at(5, 1), at(3, 2), at(4, 3), at(1, 4), at(2, 5)])
        #expect(heap.count == 5)
        #expect(drain(&heap).map(\.id) == [4, 5, 2, 3, 1])
    }

    @Test func manyPseudoRandomDeadlinesComeOutSorted() {
        var heap = TCPDeadlineHeap()
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        var pushed: [TCPDeadlineHeap.Entry] = []
        for i in 0..<1000 {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            let e = at(Int64(x % 500), UInt64(i))
            pushed.append(e)
            heap.push(e)
        }
        let sorted = pushed.sorted { $0.deadline != $1.deadline ? $0.deadline < $1.deadline : $0.id < $1.id }
        #expect(drain(&heap) == sorted)
    }
}
