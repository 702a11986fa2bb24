import Wire

/// What each outgoing sequence number of one subscription was, for
/// answering the subscriber's NACKs (RFC 4585 section 6.2.1): the outgoing
/// number names a packet of some source SSRC and sequence number, which
/// the retransmission buffer holds, and the rewrite to apply again.
///
/// A fixed ring indexed by `outgoing sequence number & (capacity - 1)`,
/// allocated once at `init`; `record` and `lookup` allocate nothing (as
/// long as the value is not copied between them). A slot keeps the
/// outgoing number it was written for, so an entry overwritten by a
/// number `capacity` later, or never written, answers nil rather than
/// another packet's mapping.
package struct ForwardedPacketHistory: Sendable {
    struct Entry: Sendable {
        var sourceSSRC: SSRC
        var sourceSequenceNumber: UInt16
        var rewrite: RTPRewrite
        var used: Bool
    }

    package static let defaultCapacity = 1024

    /// Entries kept: a power of two.
    package let capacity: Int
    private let mask: Int
    private var entries: [Entry]

    /// `capacity` is rounded up to a power of two in 16...32768 (half the
    /// sequence number space, so no number can be mistaken for another
    /// that shares its slot).
    package init(capacity: Int = Self.defaultCapacity) {
        var size = 16
        while size < capacity, size < 32768 { size *= 2 }
        self.capacity = size
        mask = size - 1
        entries = Array(
            repeating: Entry(
                sourceSSRC: SSRC(0), sourceSequenceNumber: 0, rewrite: RTPRewrite(ssrc: SSRC(0), sequenceNumber: 0, timestamp: 0),
                used: false), count: size)
    }

    /// Bytes of the ring's entries (its one allocation).
    package var allocatedByteCount: Int { capacity * MemoryLayout<Entry>.stride }

    /// Records one forwarded packet: `rewrite` as applied, and the source
    /// packet it was applied to.
    package mutating func record(_ rewrite: RTPRewrite, sourceSSRC: SSRC, sourceSequenceNumber: UInt16) {
        entries[Int(rewrite.sequenceNumber) & mask] = Entry(
            sourceSSRC: sourceSSRC, sourceSequenceNumber: sourceSequenceNumber, rewrite: rewrite, used: true)
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

    /// Forgets everything (e.g. when the subscription restarts).
    package mutating func removeAll() {
        for i in entries.indices { entries[i].used = false }
    }
}
