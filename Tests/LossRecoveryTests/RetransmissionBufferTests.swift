import LossRecovery
import Testing
import Wire

/// A recognisable packet: `count` bytes, each derived from the SSRC and
/// sequence number so that a wrong slot cannot pass for the right one.
func fakePacket(ssrc: UInt32, sequenceNumber: UInt16, count: Int = 100) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: Int(ssrc) &* 31 &+ Int(sequenceNumber) &* 7 &+ $0) }
}

func at(ms: Int64) -> Instant { Instant(nanoseconds: ms * 1_000_000) }

extension RetransmissionBuffer {
    mutating func store(_ bytes: [UInt8], ssrc: UInt32, sequenceNumber: UInt16, arrival: Instant) {
        bytes.withUnsafeBytes { store($0, ssrc: SSRC(ssrc), sequenceNumber: sequenceNumber, arrival: arrival) }
    }

    func bytes(ssrc: UInt32, sequenceNumber: UInt16, now: Instant) -> [UInt8]? {
        withPacket(ssrc: SSRC(ssrc), sequenceNumber: sequenceNumber, now: now) { Array($0) }
    }
}

@Suite struct RetransmissionBufferTests {
    @Test func returnsTheExactBytesStored() {
        var buffer = RetransmissionBuffer(capacity: 8, maxAge: .seconds(1))
        let packet = fakePacket(ssrc: 0x1111, sequenceNumber: 42, count: 1200)
        buffer.store(packet, ssrc: 0x1111, sequenceNumber: 42, arrival: at(ms: 0))
        #expect(buffer.bytes(ssrc: 0x1111, sequenceNumber: 42, now: at(ms: 10)) == packet)
        #expect(buffer.bytes(ssrc: 0x1111, sequenceNumber: 43, now: at(ms: 10)) == nil)
        #expect(buffer.storedPackets == 1)
    }

    @Test func neverStoredAndWrongSSRCAreNil() {
        var buffer = RetransmissionBuffer(capacity: 8, maxAge: .seconds(1))
        #expect(buffer.bytes(ssrc: 1, sequenceNumber: 0, now: at(ms: 0)) == nil)
        buffer.store(fakePacket(ssrc: 1, sequenceNumber: 5), ssrc: 1, sequenceNumber: 5, arrival: at(ms: 0))
        #expect(buffer.bytes(ssrc: 2, sequenceNumber: 5, now: at(ms: 0)) == nil)
        let found = buffer.contains(ssrc: SSRC(1), sequenceNumber: 5, now: at(ms: 0))
        #expect(found)
    }

    @Test func evictsTheOldestWhenFull() {
        var buffer = RetransmissionBuffer(capacity: 4, maxAge: .seconds(10))
        for seq in UInt16(0)..<6 {
            buffer.store(fakePacket(ssrc: 7, sequenceNumber: seq), ssrc: 7, sequenceNumber: seq, arrival: at(ms: Int64(seq)))
        }
        #expect(buffer.bytes(ssrc: 7, sequenceNumber: 0, now: at(ms: 6)) == nil)
        #expect(buffer.bytes(ssrc: 7, sequenceNumber: 1, now: at(ms: 6)) == nil)
        for seq in UInt16(2)..<6 {
            #expect(buffer.bytes(ssrc: 7, sequenceNumber: seq, now: at(ms: 6)) == fakePacket(ssrc: 7, sequenceNumber: seq))
        }
    }

    @Test func packetsOlderThanMaxAgeAreGone() {
        var buffer = RetransmissionBuffer(capacity: 16, maxAge: .milliseconds(500))
        buffer.store(fakePacket(ssrc: 9, sequenceNumber: 1), ssrc: 9, sequenceNumber: 1, arrival: at(ms: 1000))
        #expect(buffer.bytes(ssrc: 9, sequenceNumber: 1, now: at(ms: 1500)) != nil)  // exactly maxAge old
        #expect(buffer.bytes(ssrc: 9, sequenceNumber: 1, now: at(ms: 1501)) == nil)
    }

    @Test func sequenceNumbersWrapFrom65535To0() {
        var buffer = RetransmissionBuffer(capacity: 8, maxAge: .seconds(1))
        for seq: UInt16 in [65534, 65535, 0, 1] {
            buffer.store(fakePacket(ssrc: 3, sequenceNumber: seq), ssrc: 3, sequenceNumber: seq, arrival: at(ms: 0))
        }
        for seq: UInt16 in [65534, 65535, 0, 1] {
            #expect(buffer.bytes(ssrc: 3, sequenceNumber: seq, now: at(ms: 1)) == fakePacket(ssrc: 3, sequenceNumber: seq))
        }
        #expect(buffer.bytes(ssrc: 3, sequenceNumber: 2, now: at(ms: 1)) == nil)
    }

    @Test func oversizedAndEmptyPacketsAreCountedNotStored() {
        var buffer = RetransmissionBuffer(capacity: 8, maxAge: .seconds(1), maxPacketSize: 200)
        buffer.store(fakePacket(ssrc: 1, sequenceNumber: 1, count: 201), ssrc: 1, sequenceNumber: 1, arrival: at(ms: 0))
        buffer.store([], ssrc: 1, sequenceNumber: 2, arrival: at(ms: 0))
        buffer.store(fakePacket(ssrc: 1, sequenceNumber: 3, count: 200), ssrc: 1, sequenceNumber: 3, arrival: at(ms: 0))
        #expect(buffer.oversizedPackets == 2)
        #expect(buffer.storedPackets == 1)
        #expect(buffer.bytes(ssrc: 1, sequenceNumber: 1, now: at(ms: 0)) == nil)
        #expect(buffer.bytes(ssrc: 1, sequenceNumber: 3, now: at(ms: 0))?.count == 200)
    }

    @Test func duplicatesOverwriteTheirOwnSlot() {
        var buffer = RetransmissionBuffer(capacity: 2, maxAge: .seconds(1))
        buffer.store(fakePacket(ssrc: 1, sequenceNumber: 1), ssrc: 1, sequenceNumber: 1, arrival: at(ms: 0))
        buffer.store(fakePacket(ssrc: 1, sequenceNumber: 2), ssrc: 1, sequenceNumber: 2, arrival: at(ms: 1))
        let again = fakePacket(ssrc: 1, sequenceNumber: 99, count: 50)
        buffer.store(again, ssrc: 1, sequenceNumber: 1, arrival: at(ms: 2))
        // The duplicate took no new slot, so 2 survives.
        #expect(buffer.bytes(ssrc: 1, sequenceNumber: 1, now: at(ms: 3)) == again)
        #expect(buffer.bytes(ssrc: 1, sequenceNumber: 2, now: at(ms: 3)) == fakePacket(ssrc: 1, sequenceNumber: 2))
    }

    @Test func threeInterleavedSSRCsKeepTheirOwnPackets() {
        var buffer = RetransmissionBuffer(capacity: 300, maxAge: .seconds(1))
        let ssrcs: [UInt32] = [0xA, 0xB, 0xC]
        for i in 0..<100 {
            for (n, ssrc) in ssrcs.enumerated() {
                // The same sequence numbers on every layer, plus an offset.
                let seq = UInt16(truncatingIfNeeded: 65500 + i + n * 3)
                buffer.store(
                    fakePacket(ssrc: ssrc, sequenceNumber: seq), ssrc: ssrc, sequenceNumber: seq, arrival: at(ms: Int64(i)))
            }
        }
        for i in 0..<100 {
            for (n, ssrc) in ssrcs.enumerated() {
                let seq = UInt16(truncatingIfNeeded: 65500 + i + n * 3)
                #expect(
                    buffer.bytes(ssrc: ssrc, sequenceNumber: seq, now: at(ms: 100)) == fakePacket(ssrc: ssrc, sequenceNumber: seq)
                )
            }
        }
    }

    @Test func aFifthSSRCTakesOverTheLeastRecentlyUsedIndex() {
        var buffer = RetransmissionBuffer(capacity: 64, maxAge: .seconds(1))
        for ssrc: UInt32 in 1...4 {
            buffer.store(fakePacket(ssrc: ssrc, sequenceNumber: 10), ssrc: ssrc, sequenceNumber: 10, arrival: at(ms: Int64(ssrc)))
        }
        buffer.store(fakePacket(ssrc: 5, sequenceNumber: 10), ssrc: 5, sequenceNumber: 10, arrival: at(ms: 5))
        #expect(buffer.bytes(ssrc: 1, sequenceNumber: 10, now: at(ms: 6)) == nil)
        for ssrc: UInt32 in 2...5 {
            #expect(buffer.bytes(ssrc: ssrc, sequenceNumber: 10, now: at(ms: 6)) == fakePacket(ssrc: ssrc, sequenceNumber: 10))
        }
    }

    @Test func presetsMatchTheirDocumentedSizes() {
        let video = RetransmissionBuffer.video()
        #expect(video.capacity == 256 && video.maximumCapacity == 4096)
        #expect(video.maxAge == .seconds(1))
        #expect(video.maxPacketSize == 1500)
        let audio = RetransmissionBuffer.audio()
        #expect(audio.capacity == 64 && audio.maximumCapacity == 64)
        #expect(audio.maxAge == .milliseconds(500))
    }

    /// Stores `seconds` of `rate` packets a second on three interleaved
    /// layers from `start` ms; returns the next instant.
    @discardableResult
    private func feed(_ buffer: inout RetransmissionBuffer, rate: Int, seconds: Int, from start: Int64 = 0) -> Int64 {
        var seqs: [UInt16] = [65000, 100, 30000]
        var ms = start
        for step in 0..<(rate * seconds) {
            let layer = step % 3
            ms = start + Int64(step) * 1000 / Int64(rate)
            let seq = seqs[layer]
            buffer.store(
                fakePacket(ssrc: UInt32(0x100 + layer), sequenceNumber: seq, count: 300), ssrc: UInt32(0x100 + layer),
                sequenceNumber: seq, arrival: at(ms: ms))
            seqs[layer] &+= 1
        }
        return ms
    }

    /// The video buffer settles at the power of two of slots that holds a
    /// second of the track's rate, and then stops growing: a 300 kbit/s
    /// track stays at 256, Chrome's three layers (~460/s) settle at 512,
    /// 2,000/s at 2,048; a buffer without a maximum never grows.
    @Test func growsToHoldOneSecondOfTheRate() {
        for (rate, settled) in [(150, 256), (460, 512), (2000, 2048)] {
            var buffer = RetransmissionBuffer.video()
            feed(&buffer, rate: rate, seconds: 4)
            let grown = buffer.growths
            #expect(buffer.capacity == settled, "\(rate) packets/s")
            #expect(buffer.allocatedByteCount == settled * 16 + 4 * 2 * settled * 4 + settled * 1500)
            feed(&buffer, rate: rate, seconds: 4, from: 10_000)
            #expect(buffer.growths == grown, "\(rate) packets/s: grew again in steady state")
        }
        var fixed = RetransmissionBuffer(capacity: 64, maxAge: .seconds(1))
        feed(&fixed, rate: 2000, seconds: 2)
        #expect(fixed.capacity == 64 && fixed.growths == 0)
        // 16, 32, 64, then the bound.
        var bounded = RetransmissionBuffer(capacity: 16, maxAge: .seconds(1), maximumCapacity: 100)
        feed(&bounded, rate: 5000, seconds: 1)
        #expect(bounded.capacity == 100)
    }

    /// Growth keeps every stored packet with its bytes, and the ring still
    /// evicts the oldest first afterwards.
    @Test func growthKeepsPacketsAndEvictionOrder() {
        var buffer = RetransmissionBuffer(capacity: 4, maxAge: .seconds(1), maximumCapacity: 8)
        // 0...3 fill the ring at 0 ms; 4 at 10 ms would reuse 0's slot,
        // stored 10 ms ago: the buffer doubles instead.
        for seq in UInt16(0)...4 {
            buffer.store(
                fakePacket(ssrc: 7, sequenceNumber: seq), ssrc: 7, sequenceNumber: seq, arrival: at(ms: seq == 4 ? 10 : 0))
        }
        #expect(buffer.capacity == 8 && buffer.growths == 1)
        for seq in UInt16(0)...4 {
            #expect(buffer.bytes(ssrc: 7, sequenceNumber: seq, now: at(ms: 20)) == fakePacket(ssrc: 7, sequenceNumber: seq))
        }
        // At its maximum: 5...7 fill it, 8 and 9 evict 0 and 1.
        for seq in UInt16(5)...9 {
            buffer.store(fakePacket(ssrc: 7, sequenceNumber: seq), ssrc: 7, sequenceNumber: seq, arrival: at(ms: 30))
        }
        #expect(buffer.capacity == 8)
        #expect(buffer.bytes(ssrc: 7, sequenceNumber: 0, now: at(ms: 40)) == nil)
        #expect(buffer.bytes(ssrc: 7, sequenceNumber: 1, now: at(ms: 40)) == nil)
        for seq in UInt16(2)...9 {
            #expect(buffer.bytes(ssrc: 7, sequenceNumber: seq, now: at(ms: 40)) == fakePacket(ssrc: 7, sequenceNumber: seq))
        }
    }

    /// A long run at video rates across three layers: the buffer grows to
    /// its settled size in the first second and allocates nothing after,
    /// and the packet 100 numbers back on each layer (about 0.5 s old) is
    /// always there, with its own bytes, growth included.
    @Test func longRunSettlesAndKeepsRecentPackets() {
        var buffer = RetransmissionBuffer.video()
        var scratch = [UInt8](repeating: 0xEE, count: 1500)
        var seqs: [UInt16] = [65000, 100, 30000]
        var ms: Int64 = 0
        var misses = 0
        var wrongBytes = 0
        var settled = 0
        for step in 0..<60_000 {
            if step == 3000 { settled = buffer.allocatedByteCount }
            let layer = step % 3
            let ssrc = UInt32(0x100 + layer)
            let seq = seqs[layer]
            scratch[0] = UInt8(layer)
            scratch[1] = UInt8(truncatingIfNeeded: seq >> 8)
            scratch[2] = UInt8(truncatingIfNeeded: seq)
            let count = 60 + step % 1400
            scratch.withUnsafeBytes {
                buffer.store(
                    UnsafeRawBufferPointer(rebasing: $0[0..<count]), ssrc: SSRC(ssrc), sequenceNumber: seq, arrival: at(ms: ms))
            }
            if step % 3 == 2 { ms += 5 }  // 600 packets per second
            let back = seq &- 100
            let found = buffer.withPacket(ssrc: SSRC(ssrc), sequenceNumber: back, now: at(ms: ms)) {
                ($0[0], UInt16($0[1]) << 8 | UInt16($0[2]))
            }
            if step >= 300 {
                if let found { if found.0 != UInt8(layer) || found.1 != back { wrongBytes += 1 } } else { misses += 1 }
            }
            seqs[layer] &+= 1
        }
        #expect(misses == 0)
        #expect(wrongBytes == 0)
        #expect(buffer.capacity == 1024)
        #expect(buffer.allocatedByteCount == settled)
        #expect(buffer.storedPackets == 60_000)
    }
}
