import Wire

/// The packets of one incoming track (all of its SSRCs: up to three
/// simulcast layers, plus one spare for an SSRC change), kept so that a
/// subscriber's Generic NACK (RFC 4585 section 6.2.1) can be answered by
/// retransmission (RFC 4588) without asking the publisher.
///
/// Memory: one allocation at `init`, never resized: the slot table, the
/// per-SSRC sequence index and `capacity × maxPacketSize` bytes of packet
/// storage. `store` and `withPacket` allocate nothing and run in constant
/// time. `~Copyable` because the struct owns that allocation and frees it
/// in `deinit`; the owner (the media worker's per-track class) holds it
/// by value.
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

    package let capacity: Int
    package let maxAge: Duration
    package let maxPacketSize: Int
    /// Sequence index entries per SSRC (a power of two).
    package let indexSize: Int

    /// Packets stored (duplicates included).
    package private(set) var storedPackets = 0
    /// Packets refused because they were empty or larger than
    /// `maxPacketSize`.
    package private(set) var oversizedPackets = 0

    private let memory: UnsafeMutableRawPointer
    private let slots: UnsafeMutablePointer<Slot>
    private let index: UnsafeMutablePointer<Int32>
    private let packets: UnsafeMutableRawPointer
    private var ssrcs: InlineArray<4, SSRCEntry>
    private var nextSlot = 0

    /// Bytes of the single allocation made at init.
    package let allocatedByteCount: Int

    /// - Parameters:
    ///   - capacity: packets kept, across all SSRCs of the track (clamped to
    ///     1...65536).
    ///   - maxAge: a stored packet older than this is not returned.
    ///   - maxPacketSize: larger packets are not stored (clamped to
    ///     1...65535).
    package init(capacity: Int, maxAge: Duration, maxPacketSize: Int = 1500) {
        let capacity = min(max(capacity, 1), 65536)
        let maxPacketSize = min(max(maxPacketSize, 1), Int(UInt16.max))
        self.capacity = capacity
        self.maxAge = maxAge
        self.maxPacketSize = maxPacketSize
        var indexSize = 1
        while indexSize < 2 * capacity { indexSize <<= 1 }
        self.indexSize = indexSize

        let slotBytes = capacity * MemoryLayout<Slot>.stride
        let indexBytes = Self.maximumSSRCs * indexSize * MemoryLayout<Int32>.stride
        let total = slotBytes + indexBytes + capacity * maxPacketSize
        allocatedByteCount = total
        memory = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: MemoryLayout<Slot>.alignment)
        slots = memory.bindMemory(to: Slot.self, capacity: capacity)
        slots.initialize(repeating: Slot(arrival: 0, ssrc: 0, sequenceNumber: 0, length: 0), count: capacity)
        index = (memory + slotBytes).bindMemory(to: Int32.self, capacity: Self.maximumSSRCs * indexSize)
        index.initialize(repeating: -1, count: Self.maximumSSRCs * indexSize)
        packets = memory + slotBytes + indexBytes
        ssrcs = .init(repeating: SSRCEntry(ssrc: 0, inUse: false, lastStore: 0))
    }

    deinit {
        memory.deallocate()
    }

    /// Video: 1 s of three simulcast layers under a 2.5 Mbit/s top layer.
    /// Chrome's layers sum to about 2.5 + 0.9 + 0.3 ≈ 3.7 Mbit/s, which at
    /// ~1,000-byte packets is 3.7e6 / 8 / 1000 ≈ 460 packets per second;
    /// doubled for keyframe bursts and small packets → 1,024 slots of
    /// 1,500 bytes (1.5 MB per track).
    package static func video() -> RetransmissionBuffer {
        RetransmissionBuffer(capacity: 1024, maxAge: .seconds(1))
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
        let entry = table * indexSize + (Int(sequenceNumber) & (indexSize - 1))
        var slot = Int(index[entry])
        if slot < 0 || !holds(slot, ssrc: ssrc.rawValue, sequenceNumber: sequenceNumber) {
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
