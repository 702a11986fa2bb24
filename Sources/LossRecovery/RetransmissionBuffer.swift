import Wire

/// The packets of one incoming track (all of its SSRCs: up to three
/// simulcast layers, plus one spare for an SSRC change), kept so that a
/// subscriber's Generic NACK (RFC 4585 section 6.2.1) can be answered by
/// retransmission (RFC 4588) without asking the publisher.
///
/// Memory: one allocation holding the slot table, the per-SSRC sequence
/// index and `capacity × maxPacketSize` bytes of packet storage. It starts
/// at `capacity` and doubles, up to `maximumCapacity`, only when the slot
/// about to be reused holds a packet younger than `maxAge`: the buffer
/// then holds about the track's packet rate × `maxAge`, so a simulcast
/// publisher at ~460 packets/s keeps 512 slots (768 KB), not the fixed
/// 1.5 MB every video track had (issue #14). Growth follows what the
/// publisher sends and happens at most log2(maximum / initial) times per
/// track; `store` and `withPacket` otherwise allocate nothing and run in
/// constant time. `~Copyable` because the struct owns that allocation and
/// frees it in `deinit`; the owner (the media worker's per-track class)
/// holds it by value.
///
/// Eviction: slots are reused in arrival order (a ring), so the oldest
/// stored packet goes first when the buffer is full; a packet older than
/// `maxAge` at lookup is treated as gone even if its slot is intact.
///
/// Lookup: each known SSRC owns an index of `indexSize` entries (a power
/// of two, at least twice the capacity) from `sequenceNumber mod
/// indexSize` to a slot. An entry is trusted only if the slot it names
/// still holds that SSRC and sequence number, so overwritten slots and
/// index collisions (numbers `indexSize` apart) read as "not stored".
package struct RetransmissionBuffer: ~Copyable {
    /// SSRCs tracked at once: three simulcast layers and one spare. A fifth
    /// SSRC takes over the index of the one stored to least recently.
    package static let maximumSSRCs = 4

    private struct Slot {
        var arrival: Int64
        var ssrc: UInt32
        var sequenceNumber: UInt16
        /// Stored bytes; 0 marks an empty slot.
        var length: UInt16
    }

    private struct SSRCEntry {
        var ssrc: UInt32
        var inUse: Bool
        var lastStore: Int64
    }

    /// Slots now.
    package private(set) var capacity: Int
    /// The most slots the buffer may grow to.
    package let maximumCapacity: Int
    package let maxAge: Duration
    package let maxPacketSize: Int
    /// Sequence index entries per SSRC (a power of two).
    package private(set) var indexSize: Int

    /// Packets stored (duplicates included).
    package private(set) var storedPackets = 0
    /// Packets refused because they were empty or larger than
    /// `maxPacketSize`.
    package private(set) var oversizedPackets = 0

    private var memory: UnsafeMutableRawPointer
    private var slots: UnsafeMutablePointer<Slot>
    private var index: UnsafeMutablePointer<Int32>
    private var packets: UnsafeMutableRawPointer
    private var ssrcs: InlineArray<4, SSRCEntry>
    private var nextSlot = 0

    /// Bytes of the allocation held now.
    package private(set) var allocatedByteCount: Int
    /// Times the buffer grew.
    package private(set) var growths = 0

    /// - Parameters:
    ///   - capacity: packets kept at first, across all SSRCs of the track
    ///     (clamped to 1...65536).
    ///   - maxAge: a stored packet older than this is not returned; a ring
    ///     lap faster than this grows the buffer.
    ///   - maxPacketSize: larger packets are not stored (clamped to
    ///     1...65535).
    ///   - maximumCapacity: the most slots it may grow to (at least
    ///     `capacity`, at most 65536); nil: never grows.
    package init(capacity: Int, maxAge: Duration, maxPacketSize: Int = 1500, maximumCapacity: Int? = nil) {
        let capacity = min(max(capacity, 1), 65536)
        let maxPacketSize = min(max(maxPacketSize, 1), Int(UInt16.max))
        self.capacity = capacity
        self.maximumCapacity = min(max(maximumCapacity ?? capacity, capacity), 65536)
        self.maxAge = maxAge
        self.maxPacketSize = maxPacketSize
        let layout = Self.layout(capacity: capacity, maxPacketSize: maxPacketSize)
        indexSize = layout.indexSize
        allocatedByteCount = layout.total
        memory = UnsafeMutableRawPointer.allocate(byteCount: layout.total, alignment: MemoryLayout<Slot>.alignment)
        slots = memory.bindMemory(to: Slot.self, capacity: capacity)
        slots.initialize(repeating: Slot(arrival: 0, ssrc: 0, sequenceNumber: 0, length: 0), count: capacity)
        index = (memory + layout.slotBytes).bindMemory(to: Int32.self, capacity: Self.maximumSSRCs * layout.indexSize)
        index.initialize(repeating: -1, count: Self.maximumSSRCs * layout.indexSize)
        packets = memory + layout.slotBytes + layout.indexBytes
        ssrcs = .init(repeating: SSRCEntry(ssrc: 0, inUse: false, lastStore: 0))
    }

    private static func layout(
        capacity: Int, maxPacketSize: Int
    ) -> (indexSize: Int, slotBytes: Int, indexBytes: Int, total: Int) {
        var indexSize = 1
        while indexSize < 2 * capacity { indexSize <<= 1 }
        let slotBytes = capacity * MemoryLayout<Slot>.stride
        let indexBytes = maximumSSRCs * indexSize * MemoryLayout<Int32>.stride
        return (indexSize, slotBytes, indexBytes, slotBytes + indexBytes + capacity * maxPacketSize)
    }

    deinit {
        memory.deallocate()
    }

    /// Video: one second of every simulcast layer. It starts at 256 slots
    /// of 1,500 bytes (384 KB: a second of a 2 Mbit/s single layer) and
    /// grows with the rate: Chrome's three layers (about 2.5 + 0.9 + 0.3
    /// Mbit/s, some 460 packets a second) settle at 512 slots (768 KB); the
    /// bound, 4,096 slots (6 MB), is a second at about 40 Mbit/s. One
    /// second because a NACK is sent one round trip after the gap is seen
    /// and retried a few times (RFC 4585 section 3.5.4); a packet older
    /// than that is too late for the receiver's jitter buffer, so the
    /// round trip sets no larger size.
    package static func video() -> RetransmissionBuffer {
        RetransmissionBuffer(capacity: 256, maxAge: .seconds(1), maximumCapacity: 4096)
    }

    /// Audio: 0.5 s of Opus at 50 packets per second is 25 packets; with
    /// room for a doubled rate (10 ms frames) and duplicates → 64 slots
    /// (96 KB per track).
    package static func audio() -> RetransmissionBuffer {
        RetransmissionBuffer(capacity: 64, maxAge: .milliseconds(500))
    }

    /// Copies `packet` into the buffer, evicting the oldest slot when full.
    /// A packet already stored under the same SSRC and sequence number is
    /// overwritten in its slot. Empty packets and packets longer than
    /// `maxPacketSize` are counted in `oversizedPackets` and not stored.
    package mutating func store(_ packet: UnsafeRawBufferPointer, ssrc: SSRC, sequenceNumber: UInt16, arrival: Instant) {
        guard packet.count > 0, packet.count <= maxPacketSize, let source = packet.baseAddress else {
            oversizedPackets &+= 1
            return
        }
        let table = tableIndex(for: ssrc.rawValue, arrival: arrival.nanoseconds)
        var entry = table * indexSize + (Int(sequenceNumber) & (indexSize - 1))
        var slot = Int(index[entry])
        if slot < 0 || !holds(slot, ssrc: ssrc.rawValue, sequenceNumber: sequenceNumber) {
            let reused = slots[nextSlot]
            if reused.length > 0, arrival.nanoseconds &- reused.arrival < maxAge.nanoseconds,
                capacity < maximumCapacity
            {
                grow()
                entry = table * indexSize + (Int(sequenceNumber) & (indexSize - 1))
            }
            slot = nextSlot
            nextSlot = nextSlot + 1 == capacity ? 0 : nextSlot + 1
            index[entry] = Int32(truncatingIfNeeded: slot)
        }
        (packets + slot * maxPacketSize).copyMemory(from: source, byteCount: packet.count)
        slots[slot] = Slot(
            arrival: arrival.nanoseconds, ssrc: ssrc.rawValue, sequenceNumber: sequenceNumber,
            length: UInt16(truncatingIfNeeded: packet.count))
        storedPackets &+= 1
    }

    /// Calls `body` with the stored bytes of the packet, or returns nil
    /// when it was never stored, has been overwritten, or arrived more than
    /// `maxAge` before `now`. The bytes are valid only inside `body`.
    package func withPacket<R>(
        ssrc: SSRC, sequenceNumber: UInt16, now: Instant, _ body: (UnsafeRawBufferPointer) -> R
    ) -> R? {
        guard let table = existingTable(for: ssrc.rawValue) else { return nil }
        let slot = Int(index[table * indexSize + (Int(sequenceNumber) & (indexSize - 1))])
        guard slot >= 0, holds(slot, ssrc: ssrc.rawValue, sequenceNumber: sequenceNumber) else { return nil }
        let meta = slots[slot]
        guard now.nanoseconds &- meta.arrival <= maxAge.nanoseconds else { return nil }
        return body(UnsafeRawBufferPointer(start: packets + slot * maxPacketSize, count: Int(meta.length)))
    }

    /// `true` when `withPacket` would find the packet.
    package func contains(ssrc: SSRC, sequenceNumber: UInt16, now: Instant) -> Bool {
        withPacket(ssrc: ssrc, sequenceNumber: sequenceNumber, now: now) { _ in true } ?? false
    }

    /// Doubles the buffer: the stored packets move, oldest first, to the
    /// start of a new allocation (so the ring keeps evicting in arrival
    /// order), and the index is rebuilt for the new size. Packets of an
    /// SSRC whose index was taken over are unreachable already and are
    /// dropped.
    private mutating func grow() {
        let newCapacity = min(capacity * 2, maximumCapacity)
        let layout = Self.layout(capacity: newCapacity, maxPacketSize: maxPacketSize)
        let newMemory = UnsafeMutableRawPointer.allocate(
            byteCount: layout.total, alignment: MemoryLayout<Slot>.alignment)
        let newSlots = newMemory.bindMemory(to: Slot.self, capacity: newCapacity)
        newSlots.initialize(repeating: Slot(arrival: 0, ssrc: 0, sequenceNumber: 0, length: 0), count: newCapacity)
        let newIndex = (newMemory + layout.slotBytes).bindMemory(
            to: Int32.self, capacity: Self.maximumSSRCs * layout.indexSize)
        newIndex.initialize(repeating: -1, count: Self.maximumSSRCs * layout.indexSize)
        let newPackets = newMemory + layout.slotBytes + layout.indexBytes
        var moved = 0
        for i in 0..<capacity {
            let old = (nextSlot + i) % capacity
            let meta = slots[old]
            guard meta.length > 0, let table = existingTable(for: meta.ssrc) else { continue }
            newSlots[moved] = meta
            (newPackets + moved * maxPacketSize).copyMemory(
                from: packets + old * maxPacketSize, byteCount: Int(meta.length))
            newIndex[table * layout.indexSize + (Int(meta.sequenceNumber) & (layout.indexSize - 1))] = Int32(moved)
            moved += 1
        }
        memory.deallocate()
        memory = newMemory
        slots = newSlots
        index = newIndex
        packets = newPackets
        capacity = newCapacity
        indexSize = layout.indexSize
        allocatedByteCount = layout.total
        nextSlot = moved == newCapacity ? 0 : moved
        growths += 1
    }

    @inline(__always)
    private func holds(_ slot: Int, ssrc: UInt32, sequenceNumber: UInt16) -> Bool {
        guard slot < capacity else { return false }
        let meta = slots[slot]
        return meta.length > 0 && meta.ssrc == ssrc && meta.sequenceNumber == sequenceNumber
    }

    private func existingTable(for ssrc: UInt32) -> Int? {
        for i in ssrcs.indices where ssrcs[i].inUse && ssrcs[i].ssrc == ssrc { return i }
        return nil
    }

    /// The index table of `ssrc`, claiming a free one or the least recently
    /// stored-to one (whose entries are cleared) for a new SSRC.
    private mutating func tableIndex(for ssrc: UInt32, arrival: Int64) -> Int {
        if let i = existingTable(for: ssrc) {
            ssrcs[i].lastStore = arrival
            return i
        }
        var victim = 0
        for i in ssrcs.indices {
            if !ssrcs[i].inUse {
                victim = i
                break
            }
            if ssrcs[i].lastStore < ssrcs[victim].lastStore { victim = i }
        }
        if ssrcs[victim].inUse {
            (index + victim * indexSize).update(repeating: -1, count: indexSize)
        }
        ssrcs[victim] = SSRCEntry(ssrc: ssrc, inUse: true, lastStore: arrival)
        return victim
    }
}
