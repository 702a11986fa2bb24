import Synchronization

/// A bounded single-producer single-consumer ring of fixed-size slots
/// between two media worker threads (docs/ARCHITECTURE.md, "Rooms over
/// every worker"). Capacity and slot size are fixed at init and the memory
/// is allocated once; a message is written in place into a slot by the
/// producer and read in place by the consumer, so nothing is allocated or
/// copied twice per message and no lock is taken.
///
/// The SPSC contract (why this is `@unchecked Sendable`): exactly one
/// thread ever calls `push` (the producer) and exactly one thread ever
/// calls `pop`/`drain` (the consumer), for the ring's whole life; any
/// thread may read `count`. The producer owns `head` and the slots in
/// `[tail, head)`'s complement; the consumer owns `tail` and the slots in
/// `[tail, head)`. `head` is stored with release ordering after the slot
/// is written and loaded by the consumer with acquire ordering before the
/// slot is read; `tail` likewise in the other direction, so a slot is
/// never read while written nor written while read.
///
/// A full ring refuses the push (`false`): the producer drops and counts,
/// it never waits for the consumer.
package final class PacketRing: @unchecked Sendable {
    /// Number of slots, a power of two.
    package let capacity: Int
    /// The most bytes one message may take.
    package let slotSize: Int
    /// Bytes from one slot to the next: an 8-byte used-length word, then
    /// `slotSize` bytes, rounded up to 64 so slots do not share cache lines
    /// more than they must.
    private let stride: Int
    private let mask: Int
    private let memory: UnsafeMutableRawPointer

    /// Messages pushed so far (the next slot the producer writes is
    /// `head & mask`). Written by the producer only.
    private let head = Atomic<Int>(0)
    // Keeps `head` and `tail` on different cache lines (Swift lays out a
    // final class's stored properties in declaration order): the producer
    // and consumer write them on different cores.
    private let padding = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Messages popped so far. Written by the consumer only.
    private let tail = Atomic<Int>(0)
    /// The producer's last view of `tail` and the consumer's last view of
    /// `head`: each side reloads the other's index only when its cached one
    /// says full (producer) or empty (consumer), so the common case touches
    /// one shared cache line instead of two.
    @exclusivity(unchecked) private var producerTail = 0
    @exclusivity(unchecked) private var consumerHead = 0

    /// `capacity` is rounded up to a power of two (at least 2); `slotSize`
    /// is the largest message in bytes (at least 1).
    package init(capacity: Int, slotSize: Int) {
        precondition(capacity > 0 && slotSize > 0, "a ring needs slots")
        var c = 2
        while c < capacity { c <<= 1 }
        self.capacity = c
        self.slotSize = slotSize
        mask = c - 1
        stride = (8 + slotSize + 63) & ~63
        // Left uninitialised: a slot is read only after the producer wrote
        // it, and untouched pages cost no memory until a burst reaches them.
        memory = .allocate(byteCount: c * stride, alignment: 64)
    }

    deinit { memory.deallocate() }

    /// Messages waiting (a snapshot: either side may move it at once).
    package var count: Int {
        let t = tail.load(ordering: .acquiring)
        return head.load(ordering: .acquiring) &- t
    }

    /// Producer only. `write` fills the slot in place and returns the bytes
    /// it used (0...slotSize), or nil to abandon the message. Returns false
    /// when the ring is full (`write` is not called) or `write` abandoned it.
    @inline(__always)
    package func push(_ write: (UnsafeMutableRawBufferPointer) -> Int?) -> Bool {
        let h = head.load(ordering: .relaxed)
        if h &- producerTail >= capacity {
            producerTail = tail.load(ordering: .acquiring)
            if h &- producerTail >= capacity { return false }
        }
        let slot = memory + (h & mask) * stride
        guard let used = write(UnsafeMutableRawBufferPointer(start: slot + 8, count: slotSize)),
            used >= 0, used <= slotSize
        else { return false }
        slot.storeBytes(of: UInt64(used), as: UInt64.self)
        head.store(h &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer only. Reads the oldest message in place (the buffer is valid
    /// only during `read`) and frees its slot; nil when the ring is empty.
    @inline(__always)
    package func pop<R>(_ read: (UnsafeRawBufferPointer) -> R) -> R? {
        let t = tail.load(ordering: .relaxed)
        if t == consumerHead {
            consumerHead = head.load(ordering: .acquiring)
            if t == consumerHead { return nil }
        }
        let result = read(message(at: t))
        tail.store(t &+ 1, ordering: .releasing)
        return result
    }

    /// Consumer only. Reads up to `limit` messages in order, then frees
    /// their slots with one store; returns how many it read. A bounded
    /// drain per loop turn keeps a flooding producer from starving the
    /// consumer's timers and sockets.
    @inline(__always)
    package func drain(limit: Int, _ read: (UnsafeRawBufferPointer) -> Void) -> Int {
        let t = tail.load(ordering: .relaxed)
        if t == consumerHead { consumerHead = head.load(ordering: .acquiring) }
        let n = min(consumerHead &- t, max(0, limit))
        guard n > 0 else { return 0 }
        for i in 0..<n { read(message(at: t &+ i)) }
        tail.store(t &+ n, ordering: .releasing)
        return n
    }

    @inline(__always)
    private func message(at index: Int) -> UnsafeRawBufferPointer {
        let slot = memory + (index & mask) * stride
        // The producer stored a length it checked against `slotSize`; the
        // `min` keeps a torn or corrupted word from reading past the slot.
        let used = min(Int(truncatingIfNeeded: slot.load(as: UInt64.self)), slotSize)
        return UnsafeRawBufferPointer(start: slot + 8, count: max(0, used))
    }
}

extension PacketRing {
    /// Consumer only: drains up to `limit` messages (as `drain`), decoding
    /// each slot as a `RelayMessage`; a slot that does not decode is
    /// skipped and counted in `malformed`, never passed on.
    @inline(__always)
    package func drainMessages(limit: Int, _ handle: (RelayMessage) -> Void) -> (read: Int, malformed: Int) {
        var malformed = 0
        let read = drain(limit: limit) { slot in
            do throws(RelayMessageError) {
                handle(try RelayMessage.decode(slot))
            } catch {
                malformed += 1
            }
        }
        return (read, malformed)
    }
}
