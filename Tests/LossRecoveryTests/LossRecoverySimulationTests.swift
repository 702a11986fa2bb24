import LossRecovery
import RTP
import SFUTesting
import Testing
import Wire

/// The pieces together on a virtual clock: a sender keeps every packet in
/// a `RetransmissionBuffer` and answers NACKs with RTX through a
/// `RetransmissionRateLimiter`; a receiver runs a `NACKGenerator` and
/// unwraps the RTX. Both directions lose 5 % of packets (seeded) and take
/// 20 ms, so the RTT is 40 ms.
@Suite struct LossRecoverySimulationTests {
    static let mediaSSRC = SSRC(0x1111_1111)
    static let rtxSSRC = SSRC(0x2222_2222)
    static let mediaPT = PayloadType(masking: 96)
    static let rtxPT = PayloadType(masking: 97)

    static func packet(sequenceNumber: UInt16) -> [UInt8] {
        var bytes: [UInt8] = [0x80, 0x60, UInt8(sequenceNumber >> 8), UInt8(truncatingIfNeeded: sequenceNumber)]
        bytes += [0, 0, 0x0B, 0xB8, 0x11, 0x11, 0x11, 0x11]
        bytes += (0..<200).map { UInt8(truncatingIfNeeded: Int(sequenceNumber) &+ $0) }
        return bytes
    }

    @Test func everyLostPacketIsRecoveredByteExactlyOverALossyLink() throws {
        var rng = SeededRandom(seed: 0x5349_4D55_4C41_5445)
        var buffer = RetransmissionBuffer.video()
        var limiter = RetransmissionRateLimiter.video()
        var nack = NACKGenerator()
        let rtt = Duration.milliseconds(40)
        var downlink: [(at: Int64, bytes: [UInt8])] = []
        var uplink: [(at: Int64, numbers: [UInt16])] = []
        var delivered: [UInt16: Int64] = [:]
        var sentAt: [UInt16: Int64] = [:]
        var recoveredByRTX = 0
        var corrupted = 0
        var rtxSequence: UInt16 = 0
        var nextSequence: UInt16 = 65000  // crosses the wrap
        var slot = [UInt8](repeating: 0, count: 1500)

        for ms in Int64(0)...11_000 {
            let now = at(ms: ms)
            // Sender: 200 packets per second for 10 s.
            if ms % 5 == 0, ms < 10_000 {
                let bytes = Self.packet(sequenceNumber: nextSequence)
                buffer.store(bytes, ssrc: Self.mediaSSRC.rawValue, sequenceNumber: nextSequence, arrival: now)
                sentAt[nextSequence] = ms
                if rng.below(100) >= 5 { downlink.append((ms + 20, bytes)) }
                nextSequence &+= 1
            }
            // Receiver.
            for item in downlink where item.at == ms {
                let header = try RTPHeader(parsing: item.bytes.span.bytes)
                if header.ssrc == Self.rtxSSRC {
                    let length = item.bytes.count
                    for (i, b) in item.bytes.enumerated() { slot[i] = b }
                    let restored = slot.withUnsafeMutableBytes {
                        RTXPacket.unwrap(in: $0, length: length, originalSSRC: Self.mediaSSRC, originalPayloadType: Self.mediaPT)
                    }
                    let original = try #require(restored)
                    if Array(slot[0..<original.length]) != Self.packet(sequenceNumber: original.originalSequenceNumber) {
                        corrupted += 1
                    }
                    if delivered[original.originalSequenceNumber] == nil { recoveredByRTX += 1 }
                    delivered[original.originalSequenceNumber] = delivered[original.originalSequenceNumber] ?? ms
                    nack.received(sequenceNumber: original.originalSequenceNumber, arrival: now, isRetransmission: true)
                } else {
                    delivered[header.sequenceNumber] = delivered[header.sequenceNumber] ?? ms
                    nack.received(sequenceNumber: header.sequenceNumber, arrival: now, isRetransmission: false)
                }
            }
            downlink.removeAll { $0.at == ms }
            if let deadline = nack.nextDeadline, deadline <= now {
                let request = nack.poll(now: now, roundTripTime: rtt)
                if !request.sequenceNumbers.isEmpty, rng.below(100) >= 5 { uplink.append((ms + 20, request.sequenceNumbers)) }
            }
            // Sender: answer NACKs from the buffer, as RTX.
            for item in uplink where item.at == ms {
                for seq in item.numbers {
                    let length = buffer.withPacket(ssrc: Self.mediaSSRC, sequenceNumber: seq, now: now) { stored in
                        for i in 0..<stored.count { slot[i] = stored[i] }
                        return stored.count
                    }
                    guard let length,
                        limiter.shouldRetransmit(
                            ssrc: Self.rtxSSRC, sequenceNumber: seq, bytes: length + 2, now: now, roundTripTime: rtt)
                    else { continue }
                    let wrapped = slot.withUnsafeMutableBytes {
                        RTXPacket.wrap(
                            in: $0, length: length, rtxSSRC: Self.rtxSSRC, rtxSequenceNumber: rtxSequence,
                            rtxPayloadType: Self.rtxPT)
                    }
                    rtxSequence &+= 1
                    let rtxLength = try #require(wrapped)
                    if rng.below(100) >= 5 { downlink.append((ms + 20, Array(slot[0..<rtxLength]))) }
                }
            }
            uplink.removeAll { $0.at == ms }
        }

        #expect(sentAt.count == 2000)
        #expect(corrupted == 0)
        #expect(recoveredByRTX > 50)
        // A loss at the very end shows no gap (nothing follows it), so the
        // last 100 ms are not judged.
        let judged = sentAt.filter { $0.value < 9900 }
        let missing = judged.keys.filter { delivered[$0] == nil }
        #expect(missing.isEmpty)
        let slow = judged.filter { seq, sent in (delivered[seq] ?? .max) - sent > 500 }
        #expect(slow.isEmpty)
    }
}
