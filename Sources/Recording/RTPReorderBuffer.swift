import Wire

/// The recorder's jitter buffer for one RTP stream: packets go in in any
/// order (reordered on the network, or repaired late by a retransmission
/// the server asked the publisher for, RFC 4585 section 6.2.1) and come
/// out in sequence order. A missing packet is waited for at most
/// `repairWait` after a later packet arrived; then it is skipped and
/// counted lost, and what follows is released.
///
/// Storage is allocated once: `capacity` slots of `packetBytes` each. A
/// packet too large for a slot is refused; a packet `capacity` or more
/// numbers ahead of the next one to release forces the oldest out (given
/// up as lost), so memory and delay stay bounded whatever arrives.
/// Sequence numbers are extended to 64 bits on arrival (RFC 3550
/// appendix A.1), so wrap-around needs no special case. A class with one
/// owner (a track recorder, on the recorder's thread): its release
/// callbacks may change the owner's other state.
package final class RTPReorderBuffer {
    package struct Statistics: Equatable, Sendable {
        package var inserted = 0
        package var released = 0
        /// Numbers given up after waiting (never arrived in time).
        package var skipped = 0
        /// Arrived after their number had been released or given up.
        package var late = 0
        package var duplicates = 0
        /// Longer than a slot.
        package var tooLarge = 0
        package init() {}
    }

    package let capacity: Int
    package let packetBytes: Int
    package let repairWait: Duration
    package private(set) var statistics = Statistics()

    private var bytes: [UInt8]
    private var lengths: [Int]
    /// The extended number held in each slot (`nil`: empty).
    private var held: [UInt64?]
    /// The next extended number to release; nil before the first packet.
    private var next: UInt64?
    private var highest: UInt64 = 0
    /// When the packet at `next` was first found missing with a later one
    /// held.
    private var gapSince: Instant?

    package init(capacity: Int, packetBytes: Int, repairWait: Duration) {
        self.capacity = max(1, capacity)
        self.packetBytes = max(1, packetBytes)
        self.repairWait = repairWait
        bytes = [UInt8](repeating: 0, count: self.capacity * self.packetBytes)
        lengths = [Int](repeating: 0, count: self.capacity)
        held = [UInt64?](repeating: nil, count: self.capacity)
    }

    /// What happened to one inserted packet.
    package enum Insertion: Equatable, Sendable {
        case stored
        case duplicate
        case late
        case tooLarge
    }

    /// Stores a copy of `packet` under `sequenceNumber`. Packets that a
    /// full window pushes out are released to `release` first, in order,
    /// with the numbers skipped before each.
    @discardableResult
    package func insert(
        sequenceNumber: UInt16, packet: UnsafeRawBufferPointer, now: Instant,
        release: (UnsafeRawBufferPointer, _ skippedBefore: Int) -> Void
    ) -> Insertion {
        guard packet.count <= packetBytes, packet.count > 0 else {
            statistics.tooLarge += 1
            return .tooLarge
        }
        let n: UInt64
        if let start = next {
            // Extend against the highest seen: within +-32768 of it.
            let delta = Int64(Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: highest)))
            let extended = Int64(bitPattern: highest) + delta
            guard extended >= Int64(start) else {
                statistics.late += 1
                return .late
            }
            n = UInt64(extended)
        } else {
            // Start at 2^32 so a packet that arrives earlier than the first
            // one stays positive.
            n = 1 << 32 | UInt64(sequenceNumber)
            next = n
            highest = n
        }
        // Past the window: give up the oldest numbers until it fits.
        while let start = next, n >= start + UInt64(capacity) {
            releaseHead(release: release)
        }
        let slot = Int(n % UInt64(capacity))
        if held[slot] == n {
            statistics.duplicates += 1
            return .duplicate
        }
        held[slot] = n
        lengths[slot] = packet.count
        bytes.withUnsafeMutableBytes { target in
            UnsafeMutableRawBufferPointer(rebasing: target[slot * packetBytes..<slot * packetBytes + packet.count])
                .copyMemory(from: packet)
        }
        highest = max(highest, n)
        statistics.inserted += 1
        return .stored
    }

    /// Releases, in order, every packet that is ready at `now`: held
    /// packets at the head, and past a gap once it has waited
    /// `repairWait`. `skippedBefore` is the count of numbers given up
    /// just before the packet.
    package func drain(now: Instant, release: (UnsafeRawBufferPointer, _ skippedBefore: Int) -> Void) {
        while let start = next, start <= highest {
            if held[Int(start % UInt64(capacity))] == start {
                releaseHead(release: release)
                continue
            }
            let since = gapSince ?? now
            gapSince = since
            guard now - since >= repairWait else { return }
            releaseHead(release: release)
        }
    }

    /// Releases everything held, skipping every gap (end of the stream).
    package func flush(release: (UnsafeRawBufferPointer, _ skippedBefore: Int) -> Void) {
        while let start = next, start <= highest { releaseHead(release: release) }
    }

    /// When `drain` will next give up a missing packet; nil when nothing
    /// waits for a repair.
    package var repairDeadline: Instant? { gapSince.map { $0 + repairWait } }

    private var pendingSkips = 0

    /// Releases the packet at `next` if held, else gives its number up
    /// (counted, and reported with the next packet released).
    private func releaseHead(release: (UnsafeRawBufferPointer, _ skippedBefore: Int) -> Void) {
        guard let start = next else { return }
        let slot = Int(start % UInt64(capacity))
        next = start + 1
        gapSince = nil
        if held[slot] == start {
            held[slot] = nil
            statistics.released += 1
            let skipped = pendingSkips
            pendingSkips = 0
            let length = lengths[slot]
            bytes.withUnsafeBytes { all in
                release(UnsafeRawBufferPointer(rebasing: all[slot * packetBytes..<slot * packetBytes + length]), skipped)
            }
        } else {
            statistics.skipped += 1
            pendingSkips += 1
        }
    }
}
