import Wire

/// The TCP server's timers: a binary min-heap of (deadline, connection id)
/// with lazy deletion. A connection records its current deadline; when the
/// deadline changes a new entry is pushed and the old one stays behind, to
/// be skipped when it surfaces (its deadline no longer matches the
/// connection's, or the connection is gone). So changing a deadline costs
/// O(log n), finding the next one O(1), and no scan over thousands of idle
/// connections runs per wakeup. Stale entries are bounded by rebuilding the
/// heap from the live deadlines when it grows past twice their number.
struct TCPDeadlineHeap {
    struct Entry: Equatable {
        var deadline: Instant
        var id: UInt64
    }

    private(set) var entries: [Entry] = []

    var count: Int { entries.count }
    var first: Entry? { entries.first }

    /// Earlier deadlines first; equal deadlines in id order, so the order of
    /// timeouts is deterministic.
    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.id < b.id
    }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(entries[child], entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Entry? {
        guard let top = entries.first else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(from: 0)
        }
        return top
    }

    /// Replaces the contents with `live` (the connections' current deadlines).
    mutating func rebuild(from live: some Sequence<Entry>) {
        entries = Array(live)
        var i = entries.count / 2
        while i > 0 {
            i -= 1
            siftDown(from: i)
        }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            var best = left
            if left + 1 < entries.count, Self.precedes(entries[left + 1], entries[left]) { best = left + 1 }
            guard Self.precedes(entries[best], entries[parent]) else { return }
            entries.swapAt(best, parent)
            parent = best
        }
    }
}
