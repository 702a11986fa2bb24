import Wire

/// A ring of the RTP packets a publisher produced, in send order: packets
/// not yet sent wait between `sendCursor` and `writeCursor`; sent ones stay
/// until overwritten so NACKed packets can be retransmitted (RFC 4588).
/// One storage allocation at init; nothing per packet.
final class PacketHistory {
    static let slotSize = 1200
    let capacity: Int
    private var storage: UnsafeMutableRawBufferPointer
    private var lengths: [Int]
    private var ssrcs: [UInt32]
    private var sequenceNumbers: [UInt16]
    /// Packets written and packets handed out, counting from 0.
    private(set) var writeCursor = 0
    private(set) var sendCursor = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        storage = .allocate(byteCount: self.capacity * Self.slotSize, alignment: 8)
        lengths = [Int](repeating: 0, count: self.capacity)
        ssrcs = [UInt32](repeating: 0, count: self.capacity)
        sequenceNumbers = [UInt16](repeating: 0, count: self.capacity)
    }

    deinit { storage.deallocate() }

    var pending: Int { writeCursor - sendCursor }

    /// Where the ring's bytes live; fixed for the history's lifetime.
    var storageBaseAddress: UnsafeMutableRawPointer? { storage.baseAddress }

    /// Copies `packet` (at most `slotSize` bytes; longer ones are dropped)
    /// into the next slot.
    func append(_ packet: UnsafeRawBufferPointer, ssrc: SSRC, sequenceNumber: UInt16) {
        guard packet.count <= Self.slotSize else { return }
        let slot = writeCursor % capacity
        UnsafeMutableRawBufferPointer(rebasing: storage[slot * Self.slotSize..<slot * Self.slotSize + packet.count])
            .copyMemory(from: packet)
        lengths[slot] = packet.count
        ssrcs[slot] = ssrc.rawValue
        sequenceNumbers[slot] = sequenceNumber
        writeCursor += 1
        // A burst larger than the ring drops its oldest unsent packets.
        if writeCursor - sendCursor > capacity { sendCursor = writeCursor - capacity }
    }

    /// Copies the next unsent packet into `out`; returns its length.
    func nextUnsent(into out: UnsafeMutableRawBufferPointer) -> Int? {
        guard sendCursor < writeCursor else { return nil }
        let slot = sendCursor % capacity
        sendCursor += 1
        return copy(slot: slot, into: out)
    }

    /// The slot of a sent packet still held, for a retransmission.
    func slot(ssrc: SSRC, sequenceNumber: UInt16) -> Int? {
        let oldest = max(0, writeCursor - capacity)
        var index = sendCursor - 1
        while index >= oldest {
            let slot = index % capacity
            if ssrcs[slot] == ssrc.rawValue, sequenceNumbers[slot] == sequenceNumber { return slot }
            index -= 1
        }
        return nil
    }

    /// Whether `slot` still holds that packet (it may have been overwritten).
    func holds(slot: Int, ssrc: SSRC, sequenceNumber: UInt16) -> Bool {
        slot >= 0 && slot < capacity && ssrcs[slot] == ssrc.rawValue && sequenceNumbers[slot] == sequenceNumber
    }

    func packet(slot: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: storage[slot * Self.slotSize..<slot * Self.slotSize + lengths[slot]])
    }

    private func copy(slot: Int, into out: UnsafeMutableRawBufferPointer) -> Int? {
        let length = lengths[slot]
        guard length <= out.count else { return nil }
        UnsafeMutableRawBufferPointer(rebasing: out[0..<length]).copyMemory(from: packet(slot: slot))
        return length
    }
}
