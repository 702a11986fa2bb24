import Wire

/// Why a packet went out, so feedback about it can be judged: probe
/// padding is measured by the probe controller, retransmissions and media
/// alike count as load on the path.
package enum SentPacketKind: UInt8, Sendable {
    case media
    case retransmission
    case probe
}

/// One egress packet as the history remembers it.
package struct SentPacket: Equatable, Sendable {
    /// The transport-wide sequence number extended to 64 bits, so packets
    /// compare in sending order across 16-bit wraps.
    package var sequenceNumber: Int64
    /// Bytes on the wire, as counted by the caller (RTP packet size is
    /// enough; headers below UDP are the same for every packet).
    package var size: Int
    package var sentAt: Instant
    package var kind: SentPacketKind

    package init(sequenceNumber: Int64, size: Int, sentAt: Instant, kind: SentPacketKind) {
        self.sequenceNumber = sequenceNumber
        self.size = size
        self.sentAt = sentAt
        self.kind = kind
    }

    /// The 16-bit number written into the header extension.
    package var wireSequenceNumber: UInt16 { UInt16(truncatingIfNeeded: sequenceNumber) }
}

/// Send times and sizes of one subscriber transport's recent egress
/// packets, keyed by transport-wide sequence number
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 2: one
/// 16-bit counter over every RTP packet of the transport, whatever its SSRC).
///
/// A ring that starts small and doubles, up to `capacity`, only when it
/// would overwrite a packet sent less than `retention` ago: it holds about
/// the transport's packet rate × `retention`, so a 2.5 Mbit/s viewer keeps
/// a few hundred slots (a dozen kilobytes), not the ten seconds at 8 Mbit/s
/// the bound allows (issue #14). Growth is driven by what we send, never
/// by what a peer sends, and happens a handful of times over a transport's
/// life (log2(capacity / initialCapacity) at most); recording a packet
/// otherwise allocates nothing. A 16-bit number from feedback is placed at
/// the 64-bit position nearest the newest packet sent (half the 16-bit
/// space either way), and found only while its slot has not been reused,
/// so feedback about packets that fell out of the ring, or were never
/// sent, finds nothing.
package struct SentPacketHistory: Sendable {
    /// The bound: ten seconds at about 8 Mbit/s of 1200-byte packets.
    package static let defaultCapacity = 8192
    /// Where the ring starts: one second of a 300 kbit/s stream.
    package static let defaultInitialCapacity = 256
    /// How long a packet must stay findable before the ring may reuse its
    /// slot: feedback comes every 50 to 250 ms (libwebrtc) after one
    /// round trip, so one second covers round trips up to about 750 ms.
    package static let defaultRetention: Duration = .seconds(1)

    private struct Slot: Sendable {
        var sequenceNumber: Int64 = -1
        var sentNanoseconds: Int64 = 0
        var size: Int32 = 0
        var kind: SentPacketKind = .media
    }

    private var slots: [Slot]
    /// `slots.count - 1` (a power of two minus one).
    private var mask: Int64
    private var highest: Int64?
    /// The oldest number ever recorded: nothing before it was sent.
    private var oldest: Int64?
    private var counter: UInt16
    /// The most slots the ring may grow to.
    package let capacity: Int
    package let retention: Duration

    /// - Parameters:
    ///   - capacity: the most packets remembered, rounded up to a power of two.
    ///   - initialCapacity: slots allocated at first (clamped to
    ///     1...capacity).
    ///   - retention: a slot younger than this is not reused while the ring
    ///     can still grow.
    ///   - firstSequenceNumber: what `nextSequenceNumber()` returns first.
    package init(
        capacity: Int = SentPacketHistory.defaultCapacity,
        initialCapacity: Int = SentPacketHistory.defaultInitialCapacity,
        retention: Duration = SentPacketHistory.defaultRetention,
        firstSequenceNumber: UInt16 = 0
    ) {
        // Powers of two, so a slot is a mask away (no 64-bit division per
        // packet sent).
        func rounded(_ n: Int) -> Int {
            var size = 1
            while size < n, size < 1 << 20 { size <<= 1 }
            return size
        }
        self.capacity = rounded(max(1, capacity))
        self.retention = retention
        slots = Array(repeating: Slot(), count: min(rounded(max(1, initialCapacity)), self.capacity))
        mask = Int64(slots.count - 1)
        counter = firstSequenceNumber
    }

    /// Slots the ring holds now (`capacity` at most).
    package var slotCount: Int { slots.count }

    /// Bytes of slot storage held now.
    package var allocatedByteCount: Int { slots.count * MemoryLayout<Slot>.stride }

    /// The number to write into the next egress packet; the counter wraps
    /// at 65536 as the draft's 16-bit field does.
    package mutating func nextSequenceNumber() -> UInt16 {
        defer { counter &+= 1 }
        return counter
    }

    /// Records a packet that just went out. Sizes outside 0 ... Int32.max
    /// are clamped; a number sent again overwrites the earlier record.
    package mutating func sent(transportSequenceNumber: UInt16, size: Int, at: Instant, kind: SentPacketKind) {
        let extended = extend(transportSequenceNumber)
        if extended > (highest ?? .min) { highest = extended }
        if extended < (oldest ?? .max) { oldest = extended }
        var index = Int(extended & mask)
        let previous = slots[index]
        if previous.sequenceNumber >= 0, previous.sequenceNumber != extended, slots.count < capacity,
            at.nanoseconds &- previous.sentNanoseconds < retention.nanoseconds
        {
            grow()
            index = Int(extended & mask)
        }
        slots[index] = Slot(
            sequenceNumber: extended, sentNanoseconds: at.nanoseconds,
            size: Int32(clamping: max(0, size)), kind: kind)
    }

    /// Doubles the ring (up to `capacity`). Every held number moves to its
    /// place in the larger ring; none collide, since numbers that differ
    /// modulo the old size also differ modulo twice it.
    private mutating func grow() {
        let larger = min(slots.count * 2, capacity)
        var moved = Array(repeating: Slot(), count: larger)
        for slot in slots where slot.sequenceNumber >= 0 {
            moved[Int(slot.sequenceNumber & Int64(larger - 1))] = slot
        }
        slots = moved
        mask = Int64(larger - 1)
    }

    /// The record of the packet with this wire number, if it is still held.
    package func packet(_ transportSequenceNumber: UInt16) -> SentPacket? {
        guard highest != nil else { return nil }
        let extended = extend(transportSequenceNumber)
        guard extended >= 0 else { return nil }
        let slot = slots[Int(extended & mask)]
        guard slot.sequenceNumber == extended else { return nil }
        return SentPacket(
            sequenceNumber: extended, size: Int(slot.size),
            sentAt: Instant(nanoseconds: slot.sentNanoseconds), kind: slot.kind)
    }

    /// The positions (0 is `base`) of a feedback of `count` statuses whose
    /// numbers this history can still hold: from the oldest slot not yet
    /// reused (and never before the first packet recorded) to the newest
    /// packet sent, and after `after` (an extended
    /// number already processed) when given. Feedback is walked only over
    /// these, so what one feedback costs is bounded by what we sent in the
    /// window it can refer to, not by the count it claims
    /// (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 3.1
    /// allows 65,535; issue #12).
    package func positions(base: UInt16, count: Int, after: Int64? = nil) -> Range<Int> {
        guard let highest, let oldest, count > 0 else { return 0..<0 }
        let first = extend(base)
        var lowest = max(highest - Int64(slots.count) + 1, oldest)
        if let after { lowest = max(lowest, after &+ 1) }
        let lower = max(lowest - first, 0)
        let upper = min(highest - first + 1, Int64(count))
        guard upper > lower else { return 0..<0 }
        return Int(lower)..<Int(upper)
    }

    /// The 64-bit position of `value` nearest the newest packet; the first
    /// packet lands one cycle up so early reordering stays non-negative.
    private func extend(_ value: UInt16) -> Int64 {
        guard let highest else { return 1 << 16 | Int64(value) }
        let step = Int16(bitPattern: value &- UInt16(truncatingIfNeeded: highest))
        return highest &+ Int64(step)
    }
}
