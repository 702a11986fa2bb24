import Wire

/// What a relayed track asked its source to resend, and when: a far
/// worker or node asks upstream once per lost packet per `window`, however
/// many of its subscribers NACK it. Without it each subscriber's NACK went
/// upstream and the source resent the packet once per subscriber: 28 to 48
/// % of a relay's resends arrived twice (docs/CLUSTER.md, "Cascade: limits
/// and what is left").
///
/// A fixed table of `slotCount` entries, indexed by the sequence number's
/// low bits: made once per relayed track at its first upstream NACK, no
/// allocation after. Two packets that share a slot only evict each
/// other's memory (the second is then asked for again: a duplicate, never
/// a packet left unasked).
struct UpstreamNACKMemory {
    /// How long an upstream NACK covers the same packet. The relay keeps no
    /// RTT estimate; a worker ring answers within a loop turn and a node
    /// relay within its RTT, which this should exceed: a resend lost too is
    /// asked again by the next subscriber NACK after it.
    static let window: Duration = .milliseconds(100)
    static let slotCount = 256

    private struct Entry {
        var layer: Int32 = -1
        var sequenceNumber: UInt16 = 0
        var at: Instant = Instant(nanoseconds: 0)
    }

    private var entries = [Entry](repeating: Entry(), count: Self.slotCount)

    /// True when `sequenceNumber` of `layer` was not asked for within the
    /// window (it is then remembered as asked now); false when it was.
    mutating func shouldAsk(layer: Int, sequenceNumber: UInt16, now: Instant) -> Bool {
        let i = Int(sequenceNumber) & (Self.slotCount - 1)
        let e = entries[i]
        if e.layer == Int32(truncatingIfNeeded: layer), e.sequenceNumber == sequenceNumber, now - e.at < Self.window {
            return false
        }
        entries[i] = Entry(layer: Int32(truncatingIfNeeded: layer), sequenceNumber: sequenceNumber, at: now)
        return true
    }
}
