import Wire

/// What each outgoing sequence number of one subscription was, for
/// answering the subscriber's NACKs (RFC 4585 section 6.2.1): the outgoing
/// number names a packet of some source SSRC and sequence number, which
/// the retransmission buffer holds, and the rewrite to apply again.
///
/// A ring indexed by `outgoing sequence number & (capacity - 1)`. It
/// starts small and doubles, up to `maximumCapacity`, only when one lap of
/// the ring (`capacity` consecutive outgoing numbers) took less than
/// `retention`: it then holds about the subscription's packet rate ×
/// `retention`, so a 2.5 Mbit/s viewer keeps 512 entries, not the fixed
/// 1,024 every subscription had (issue #14: memory per subscribed track).
/// Growth follows what we forward, never what a peer sends, and happens
/// at most log2(maximum / initial) times; `record` and `lookup` otherwise
/// allocate nothing (as long as the value is not copied between them).
/// A slot keeps the outgoing number it was written for, so an entry
/// overwritten by a number `capacity` later, or never written, answers
/// nil rather than another packet's mapping.
package struct ForwardedPacketHistory: Sendable {
    struct Entry: Sendable {
        var sourceSSRC: SSRC
        var sourceSequenceNumber: UInt16
        var rewrite: RTPRewrite
        var used: Bool
    }

    /// The bound: one second at about 4,000 packets/s (some 30 Mbit/s).
    package static let defaultCapacity = 4096
    /// Where the ring starts: about a second of a 300 kbit/s layer.
    package static let defaultInitialCapacity = 256
    /// How long a forwarded packet's mapping should stay findable: the
    /// retransmission buffer keeps video for one second
    /// (`RetransmissionBuffer.video()`), so an older NACK is not
    /// answerable anyway.
    package static let defaultRetention: Duration = .seconds(1)

    /// Entries kept now: a power of two.
    package private(set) var capacity: Int
    /// The most entries the ring may grow to: a power of two.
    package let maximumCapacity: Int
    package let retention: Duration
    private var mask: Int
    private var entries: [Entry]
    /// The first outgoing number of the current lap and when it was
    /// recorded.
    private var lapStart: UInt16 = 0
    private var lapStartedAt: Instant?

    /// - Parameters:
    ///   - capacity: the most entries, rounded up to a power of two in
    ///     16...32768 (half the sequence number space, so no number can be
    ///     mistaken for another that shares its slot).
    ///   - initialCapacity: entries at first, rounded the same way and at
    ///     most `capacity`.
    ///   - retention: a lap of the ring faster than this doubles it.
    package init(
        capacity: Int = Self.defaultCapacity, initialCapacity: Int = Self.defaultInitialCapacity,
        retention: Duration = Self.defaultRetention
    ) {
        func rounded(_ n: Int) -> Int {
            var size = 16
            while size < n, size < 32768 { size *= 2 }
            return size
        }
        maximumCapacity = rounded(capacity)
        self.capacity = min(rounded(initialCapacity), maximumCapacity)
        self.retention = retention
        mask = self.capacity - 1
        entries = Array(repeating: Self.empty, count: self.capacity)
    }

    private static let empty = Entry(
        sourceSSRC: SSRC(0), sourceSequenceNumber: 0, rewrite: RTPRewrite(ssrc: SSRC(0), sequenceNumber: 0, timestamp: 0),
        used: false)

    /// Bytes of the ring's entries (its one allocation).
    package var allocatedByteCount: Int { capacity * MemoryLayout<Entry>.stride }

    /// Records one forwarded packet: `rewrite` as applied, and the source
    /// packet it was applied to, forwarded at `now`.
    package mutating func record(
        _ rewrite: RTPRewrite, sourceSSRC: SSRC, sourceSequenceNumber: UInt16, now: Instant
    ) {
        let number = rewrite.sequenceNumber
        if let started = lapStartedAt {
            let ahead = Int(number &- lapStart)
            if ahead >= 32768 {
                // Numbers went back (a restarted subscription): a new lap.
                lapStart = number
                lapStartedAt = now
            } else if ahead >= capacity {
                if now - started < retention, capacity < maximumCapacity { grow() }
                lapStart = number
                lapStartedAt = now
            }
        } else {
            lapStart = number
            lapStartedAt = now
        }
        entries[Int(number) & mask] = Entry(
            sourceSSRC: sourceSSRC, sourceSequenceNumber: sourceSequenceNumber, rewrite: rewrite, used: true)
    }

    /// Doubles the ring, keeping every entry (the numbers in it span less
    /// than the old capacity, so none collide in the new one).
    private mutating func grow() {
        let size = capacity * 2
        var grown = Array(repeating: Self.empty, count: size)
        for entry in entries where entry.used {
            grown[Int(entry.rewrite.sequenceNumber) & (size - 1)] = entry
        }
        entries = grown
        capacity = size
        mask = size - 1
    }

    /// What `outgoingSequenceNumber` was, or nil when it was never sent or
    /// its slot has since been reused.
    package func lookup(
        outgoingSequenceNumber: UInt16
    ) -> (sourceSSRC: SSRC, sourceSequenceNumber: UInt16, rewrite: RTPRewrite)? {
        let entry = entries[Int(outgoingSequenceNumber) & mask]
        guard entry.used, entry.rewrite.sequenceNumber == outgoingSequenceNumber else { return nil }
        return (entry.sourceSSRC, entry.sourceSequenceNumber, entry.rewrite)
    }

    /// Forgets everything (e.g. when the subscription restarts); the ring
    /// keeps its size.
    package mutating func removeAll() {
        for i in entries.indices { entries[i].used = false }
        lapStartedAt = nil
    }
}
