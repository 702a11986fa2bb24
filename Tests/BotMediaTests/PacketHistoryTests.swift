import Testing
import Wire

@testable import BotMedia

private func append(_ history: PacketHistory, _ sequenceNumber: UInt16, ssrc: UInt32 = 5, length: Int = 20) {
    let bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: sequenceNumber), count: length)
    bytes.withUnsafeBytes { history.append($0, ssrc: SSRC(ssrc), sequenceNumber: sequenceNumber) }
}

private func sendAll(_ history: PacketHistory) -> [[UInt8]] {
    var out: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0, count: PacketHistory.slotSize)
    while let n = buffer.withUnsafeMutableBytes({ history.nextUnsent(into: $0) }) { out.append(Array(buffer[0..<n])) }
    return out
}

@Test func historyHandsOutPacketsInOrderAndKeepsThemForRetransmission() throws {
    let history = PacketHistory(capacity: 4)
    append(history, 10, length: 3)
    append(history, 11, length: 4)
    #expect(history.pending == 2)
    #expect(history.slot(ssrc: SSRC(5), sequenceNumber: 10) == nil)  // not sent yet
    #expect(sendAll(history) == [[10, 10, 10], [11, 11, 11, 11]])
    #expect(history.pending == 0)
    let slot = try #require(history.slot(ssrc: SSRC(5), sequenceNumber: 11))
    #expect(slot == 1)
    #expect(Array(history.packet(slot: slot)) == [11, 11, 11, 11])
    #expect(history.holds(slot: slot, ssrc: SSRC(5), sequenceNumber: 11))
    #expect(!history.holds(slot: slot, ssrc: SSRC(6), sequenceNumber: 11))
    #expect(history.slot(ssrc: SSRC(6), sequenceNumber: 11) == nil)
}

@Test func historyEvictsTheOldestPacketsOnceTheRingIsFull() throws {
    let history = PacketHistory(capacity: 4)
    for s: UInt16 in 1...6 {
        append(history, s)
        _ = sendAll(history)
    }
    #expect(history.slot(ssrc: SSRC(5), sequenceNumber: 1) == nil)
    #expect(history.slot(ssrc: SSRC(5), sequenceNumber: 2) == nil)
    #expect(history.slot(ssrc: SSRC(5), sequenceNumber: 3) == 2)
    #expect(history.slot(ssrc: SSRC(5), sequenceNumber: 6) == 1)
    // A stale slot number no longer holds the packet it was looked up for.
    #expect(!history.holds(slot: 0, ssrc: SSRC(5), sequenceNumber: 1))
    #expect(history.holds(slot: 0, ssrc: SSRC(5), sequenceNumber: 5))
    #expect(!history.holds(slot: 4, ssrc: SSRC(5), sequenceNumber: 5))
    #expect(!history.holds(slot: -1, ssrc: SSRC(5), sequenceNumber: 5))
}

@Test func historyFindsPacketsAcrossSequenceNumberWraparound() {
    let history = PacketHistory(capacity: 8)
    for s: UInt16 in [0xFFFE, 0xFFFF, 0, 1] { append(history, s) }
    _ = sendAll(history)
    #expect(history.slot(ssrc: SSRC(5), sequenceNumber: 0xFFFF) == 1)
    #expect(history.slot(ssrc: SSRC(5), sequenceNumber: 0) == 2)
    #expect(history.slot(ssrc: SSRC(5), sequenceNumber: 2) == nil)
}

@Test func historyBurstLargerThanTheRingDropsItsOldestUnsentPackets() {
    let history = PacketHistory(capacity: 4)
    for s: UInt16 in 1...6 { append(history, s, length: 1) }
    #expect(history.pending == 4)
    #expect(sendAll(history) == [[3], [4], [5], [6]])
}

@Test func historyDropsPacketsLongerThanASlot() {
    let history = PacketHistory(capacity: 4)
    append(history, 1, length: PacketHistory.slotSize + 1)
    #expect(history.pending == 0)
    append(history, 2, length: PacketHistory.slotSize)
    #expect(sendAll(history).map(\.count) == [PacketHistory.slotSize])
}

@Test func historyStorageIsFixedAtInitAndReusedForEveryPacket() {
    // No allocation per packet by construction: the ring's bytes and its
    // three index arrays are sized once; appending 10,000 packets moves
    // neither the storage nor the capacity.
    let history = PacketHistory(capacity: 16)
    let base = history.storageBaseAddress
    for s in 0..<10_000 {
        append(history, UInt16(truncatingIfNeeded: s))
        _ = sendAll(history)
    }
    #expect(history.storageBaseAddress == base)
    #expect(history.capacity == 16)
    #expect(history.writeCursor == 10_000)
    #expect(history.slot(ssrc: SSRC(5), sequenceNumber: 9_999 & 0xFFFF) == 9_999 % 16)
}
