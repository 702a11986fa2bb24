import Wire

/// The transports' deadlines as a binary min-heap with lazy invalidation:
/// a transport's deadline changes only when it is driven, so the engine
/// pushes a new entry then (with the transport's new generation) and leaves
/// the old one in place; an entry whose generation is no longer the
/// transport's is skipped when it reaches the top. A wake-up costs the due
/// and stale entries it pops, not one visit per transport.
///
/// Memory stays bounded: `needsCompaction(live:)` says when stale entries
/// outnumber live ones, and the owner rebuilds the heap from its live
/// deadlines (`rebuild`).
package struct TransportTimerHeap {
    package struct Entry: Equatable {
        package var deadline: Instant
        package var id: TransportID
        package var generation: UInt64
        package init(deadline: Instant, id: TransportID, generation: UInt64) {
            self.deadline = deadline
            self.id = id
            self.generation = generation
        }
    }

    private var entries: [Entry] = []

    package init() {}

    package var count: Int { entries.count }
    package var minimum: Entry? { entries.first }

    package mutating func push(_ entry: Entry) {
        entries.append(entry)
        siftUp(entries.count - 1)
    }

    @discardableResult
    package mutating func popMinimum() -> Entry? {
        guard let top = entries.first else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(0)
        }
        return top
    }

    /// True when stale entries are more than the live ones (and enough to
    /// matter): a transport whose deadline moves earlier again and again
    /// leaves its later entries behind.
    package func needsCompaction(live: Int) -> Bool { entries.count > 2 * live + 64 }

    /// Replaces the contents with `live` (heapified in O(n)); keeps the
    /// storage.
    package mutating func rebuild(_ live: some Sequence<Entry>) {
        entries.removeAll(keepingCapacity: true)
        entries.append(contentsOf: live)
        var i = entries.count / 2
        while i > 0 {
            i -= 1
            siftDown(i)
        }
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        let moving = entries[child]
        while child > 0 {
            let parent = (child - 1) / 2
            guard moving.deadline < entries[parent].deadline else { break }
            entries[child] = entries[parent]
            child = parent
        }
        entries[child] = moving
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        let moving = entries[parent]
        let n = entries.count
        while true {
            var child = 2 * parent + 1
            guard child < n else { break }
            if child + 1 < n, entries[child + 1].deadline < entries[child].deadline { child += 1 }
            guard entries[child].deadline < moving.deadline else { break }
            entries[parent] = entries[child]
            parent = child
        }
        entries[parent] = moving
    }
}
